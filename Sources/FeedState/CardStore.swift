import FeedConfig
import FeedCore
import FeedFormats
import FeedSupport
import Foundation
import SameItem

/// The memory of every card seen: per card, the latest card, when it was first and last
/// seen, and since when its source no longer lists it; a history of changes of what users
/// track; a change counter per source. Refreshes write it, readers read it. One of three
/// seams over the kept cards, with ``ReadingMarkStore`` (each person's marks) and
/// ``CardSearchIndex`` (search); a backend may keep all three in one database.
/// Implementations: ``InMemoryCardStore`` (tests), SQLite in the state directory,
/// PostgreSQL on a shared state.
public protocol CardStore: Sendable {
    /// The same store, its marks (``KeptDates/readAt``, ``KeptDates/starredAt``, unread
    /// counts, the reading views) those of `person` (``StoreUser``): cards are everyone's,
    /// marks each person's own.
    func reading(as person: Int) -> any CardStore
    /// Records what sources answered live, each in one transaction: new cards, changed
    /// ones (with a history row per tracked field that changed), cards seen again, and —
    /// for a listing that is complete — cards no longer listed, marked gone.
    func record(_ listings: [LiveListing]) async throws
    /// The kept cards of `sources` (every source when nil), gone ones included: by source,
    /// each source's listed cards in its order, then its gone ones.
    func cards(of sources: [String]?) async throws -> [KeptCard]
    /// One page of kept cards, ordered and cut by the store itself from its indexes, so a
    /// page of a large store costs a page: the page ``StoredPageQuery/page(of:)`` makes of
    /// ``cards(of:)``, which specifies it.
    func page(_ query: StoredPageQuery) async throws -> StoredPage
    /// One kept card by its id.
    func card(id: String) async throws -> KeptCard?
    /// The kept cards of `ids`, in that order, each once; ids the store keeps no card of
    /// are absent (what a run's listing already has in the store, in one query).
    func cards(ids: [String]) async throws -> [KeptCard]
    /// When the store first saw each of `ids`: the one first-seen time of a card, which a
    /// feed entry without a date of its own carries from run to run. Ids the store keeps no
    /// card of are absent (a run's new cards are first seen at its listings' time).
    func firstSeen(of ids: [String]) async throws -> [String: Date]
    /// The tracked changes of one card, oldest first.
    func history(of id: String) async throws -> [CardChange]
    /// Each source's change counter: moved whenever a card of it is added, changed, gone
    /// or back; a source never recorded is absent.
    func versions() async throws -> [String: Int]
    /// One source's change counter (``versions()``), nil when never recorded.
    func version(of source: String) async throws -> Int?
    /// Removes at most `limit` cards that `policy` no longer keeps (gone too long, or past
    /// a source's count, oldest seen first), with their history and marks; a starred card
    /// is kept, whatever its age, and counts for none of its source's cards. The number removed.
    func purge(_ policy: @Sendable (String) -> KeepPolicy, now: Date, limit: Int) async throws -> Int
    /// Per source: cards kept, gone, history rows, and bytes (as stored).
    func summary() async throws -> [StoreSummary]
    /// Per source, the ``LiveListing/tag`` of the complete listing it last merged, while
    /// nothing else changed the source's cards since (a purge that removes one forgets it).
    func listingTags() async throws -> [String: String]
    /// One source's ``listingTags()`` entry (`serve` asks before every refresh of every source).
    func listingTag(of source: String) async throws -> String?
    /// The ids of the cards kept of `source`, in no order (a shortened id is looked up in them).
    func ids(of source: String) async throws -> [String]
    /// The ids of the kept cards of `numbers` (``KeptDates/number``); a number no kept card
    /// has is absent.
    func ids(ofNumbers numbers: [Int64]) async throws -> [Int64: String]
    /// At most `limit` kept cards of `sources` whose numbers `span` names, in its order,
    /// read from the number index (a page of a large store costs a page).
    func cards(numbered span: CardNumbers, of sources: [String], limit: Int) async throws -> [KeptCard]
}

extension CardStore {
    public func version(of source: String) async throws -> Int? {
        try await versions()[source]
    }

    public func listingTag(of source: String) async throws -> String? {
        try await listingTags()[source]
    }
}

/// A page a store makes itself: the kept cards of `sources` in feed order — each source's
/// cards in the order ``CardStore/cards(of:)`` gives them, interleaved one of each source
/// at a time in `sources`' order — or by price or date (cards without one last, feed order
/// breaking ties), then `offset` cards skipped and `limit` given.
public struct StoredPageQuery: Sendable, Equatable {
    public enum Order: Sendable, Equatable {
        case feed, price, published
        /// By source id, alphabetically; each source's cards in feed order.
        case source
        /// By title (``CardSortKeys/titleKey(_:)``), feed order breaking ties.
        case title
    }

    public var sources: [String]
    public var order: Order
    public var descending: Bool
    public var offset: Int
    public var limit: Int
    /// Only the cards with these marks: each source's list is filtered first, then
    /// interleaved (as `--kind` filters), so feed order is the filtered lists' round-robin.
    public var reading: ReadingFilter?

    public init(sources: [String], order: Order, descending: Bool, offset: Int, limit: Int, reading: ReadingFilter? = nil) {
        self.sources = sources
        self.order = order
        self.descending = descending
        self.offset = offset
        self.limit = limit
        self.reading = reading
    }
}

/// What ``CardStore/page(_:)`` gives: the page's cards, and how many cards the sources hold.
public struct StoredPage: Sendable, Equatable {
    public var cards: [KeptCard]
    public var total: Int
    /// The store stopped counting at `total`: there are at least that many (a search of
    /// common words in SQLite counts up to 10,000 or the page's end).
    public var totalIsAtLeast: Bool

    public init(cards: [KeptCard], total: Int, totalIsAtLeast: Bool = false) {
        self.cards = cards
        self.total = total
        self.totalIsAtLeast = totalIsAtLeast
    }
}

/// Who the store keeps things for. Cards are kept once, for everyone, under ``default``;
/// marks are kept per person: the default person's (the command line and a `serve` without
/// accounts) under ``default``, an account's under its id (from 1).
public enum StoreUser {
    public static let `default` = 0
}

/// What one source answered live in one run.
public struct LiveListing: Sendable {
    public var source: String
    /// In the source's order.
    public var cards: [Card]
    /// Every card the source lists is here (read to its end, live, no filter, no budget
    /// cut): what is missing is gone.
    public var complete: Bool
    public var at: Date
    /// Names what the listing was read from — the source's code and settings, and the
    /// stored body behind each of its pages — when every page was read from a stored body:
    /// two complete listings with one tag are the same listing.
    public var tag: String?
    /// The cards were not read again: the upstream confirmed every body the store's last
    /// complete listing of the source was read from (``CardStore/listingTags()`` gave this
    /// ``tag``), so only the last-seen times of its listed cards move. A store whose tag
    /// for the source has changed meanwhile records nothing of it.
    public var unchanged: Bool

    public init(source: String, cards: [Card], complete: Bool, at: Date, tag: String? = nil) {
        self.source = source
        self.cards = cards
        self.complete = complete
        self.at = at
        self.tag = tag
        self.unchanged = false
    }

    /// The listing of a source whose stored listing `tag` the upstream confirmed.
    public static func unchanged(source: String, tag: String, at: Date) -> LiveListing {
        var listing = LiveListing(source: source, cards: [], complete: true, at: at, tag: tag)
        listing.unchanged = true
        return listing
    }

    /// The tag a store keeps for the source after recording this listing: only a complete
    /// listing's (what a partial one lists says nothing of the rest).
    public var tagToKeep: String? { complete ? tag : nil }
}

/// A card as the store keeps it.
public struct KeptCard: Sendable, Equatable {
    public var card: Card
    public var dates: KeptDates
    /// Its place in the source's last listing that had it (feed order).
    public var position: Int

    public init(card: Card, dates: KeptDates, position: Int) {
        self.card = card
        self.dates = dates
        self.position = position
    }
}

/// What a page is ordered by, stored beside a card (every store keeps these columns, and
/// its indexes over them make a page cost a page).
public struct CardSortKeys: Sendable {
    /// The price in millionths (``PriceMicros``).
    public var price: Int64?
    /// The card has a price not in whole millionths: no page by price from the index.
    public var priceInexact: Bool
    public var published: Double?
    /// The title as pages order it (``titleKey(_:)``).
    public var title: String

    public init(_ card: Card) {
        price = card.price.flatMap { PriceMicros.micros($0.amount) }
        priceInexact = card.price != nil && price == nil
        published = card.published?.timeIntervalSince1970
        title = Self.titleKey(card.title)
    }

    /// A title as `--sort title` orders it: case and diacritics folded, in NFC, so that its
    /// UTF-8 bytes order as Swift orders the strings (the stores' title indexes compare
    /// bytes). Most titles are ASCII, which has no diacritics: lowercased without Foundation.
    public static func titleKey(_ title: String) -> String {
        if title.utf8.allSatisfy({ $0 < 0x80 }) { return title.lowercased() }
        return title.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).precomposedStringWithCanonicalMapping
    }

    /// What a store keeps as the card's date, which the date index orders: when it was
    /// published, else when it was first seen.
    public func date(firstSeen: Date) -> Double {
        published ?? firstSeen.timeIntervalSince1970
    }
}

/// Which of the kept cards' numbers (``KeptDates/number``) a read wants: what an app that
/// syncs by item id asks for (the Fever API's `since_id`, `max_id` and `with_ids`).
public enum CardNumbers: Sendable, Equatable {
    /// Numbers past this one, lowest first: what is new since an app's last sync.
    case after(Int64)
    /// Numbers below this one, highest first: further back in what an app has.
    case before(Int64)
    /// These numbers, lowest first (unknown ones left out).
    case among([Int64])
}

/// What users track on a card: a change of one of these is a history row.
public enum TrackedField: String, Sendable, CaseIterable, Codable {
    case price
    case regularPrice = "regular_price"
    case title
    case inStock = "in_stock"

    /// The field's value as the card carries it: the price object for `price` (the keys
    /// its JSON line has), null when the card has none.
    public func value(of card: Card) -> JSONValue {
        switch self {
        case .price:
            guard let price = card.price else { return .null }
            var object: [String: JSONValue] = ["amount": .number(price.amount)]
            if let currency = price.currency { object["currency"] = .string(currency) }
            if let display = price.display { object["display"] = .string(display) }
            if let regular = price.regular { object["regular"] = .number(regular) }
            if let min = price.min { object["min"] = .number(min) }
            if let max = price.max { object["max"] = .number(max) }
            return .object(object)
        case .regularPrice: return card.price?.regular.map(JSONValue.number) ?? .null
        case .title: return .string(card.title)
        case .inStock: return card.inStock.map(JSONValue.bool) ?? .null
        }
    }

    /// A value of this field in words, for people: a price as its label, stock as in or
    /// out of stock, `none` for none; text as it is (the caller makes it safe to show).
    public func words(for value: JSONValue) -> String {
        switch (self, value) {
        case (_, .null): return "none"
        case (.price, .object(let price)):
            guard case .number(let amount)? = price["amount"] else { return "?" }
            return price["display"]?.stringValue ?? Money.format(amount, currency: price["currency"]?.stringValue)
        case (.inStock, .bool(let inStock)): return inStock ? "in stock" : "out of stock"
        case (_, .number(let number)): return "\(number)"
        case (_, .string(let text)): return text
        default: return JSONLines.text(of: value)
        }
    }

    /// ``value(of:)`` as JSON text, written straight from the card (every card recorded
    /// passes through here).
    public func text(of card: Card) -> String {
        switch self {
        case .price: card.price.map { JSONLines.text(of: $0) } ?? "null"
        default: JSONLines.text(of: value(of: card))
        }
    }
}

/// One change of a tracked field.
public struct CardChange: Sendable, Equatable {
    public var id: String
    public var field: TrackedField
    public var at: Date
    public var before: JSONValue
    public var after: JSONValue

    public init(id: String, field: TrackedField, at: Date, before: JSONValue, after: JSONValue) {
        self.id = id
        self.field = field
        self.at = at
        self.before = before
        self.after = after
    }
}

/// One source's part of the store (`aggregate store`).
public struct StoreSummary: Sendable, Equatable {
    public var source: String
    public var cards: Int
    public var gone: Int
    public var historyRows: Int
    public var bytes: Int

    public init(source: String, cards: Int, gone: Int, historyRows: Int, bytes: Int) {
        self.source = source
        self.cards = cards
        self.gone = gone
        self.historyRows = historyRows
        self.bytes = bytes
    }
}

/// What recording one listing does to the cards kept of its source: the same rules in
/// every store, which only load the rows and write what this returns.
public struct ListingMerge: Sendable {
    /// A card of the listing to insert or update (by its index there, so that no card is
    /// copied), its first-seen time, and whether its stored form changed (else only its
    /// last-seen time and position move).
    public var writes: [Write] = []

    public struct Write: Sendable {
        /// The card's index in the listing: its position in the source's feed.
        public var position: Int
        public var firstSeen: Date
        public var changed: Bool
        /// The card's stored form (its JSON line) and its hash, made once (empty when
        /// unchanged).
        public var json: [UInt8]
        public var fingerprint: String
        /// Unchanged, and listed where and as it was (not gone): only its last-seen time
        /// moves, which a complete listing does for all such cards of the source at once.
        public var onlySeen: Bool
    }
    public var changes: [CardChange] = []
    /// Ids marked gone now.
    public var gone: [String] = []
    /// Whether readers of the source see something new: a card added, changed, gone or back.
    public var movesVersion = false
    /// A source's first complete listing (the store kept none of its cards): each written
    /// card's rank, by its position, is its place in the listing, written with it
    /// (renumbering every new row cost a cold refresh of 500 feeds as much as recording
    /// them); nil for any other listing, after which a store reranks the source when a
    /// card moved.
    public var firstRanks: [Int: Int]?

    /// What a store knows of a card before the listing: enough to merge without decoding it.
    public struct Known: Sendable {
        public var firstSeen: Date
        public var goneSince: Date?
        /// Its place in the listing that last had it.
        public var position: Int
        /// The tracked fields' values as stored (``StoredCardForm/trackedText(_:)``), read
        /// only for a card whose hash changed: most of a refresh reads none.
        public var trackedText: String
        /// The tracked fields' values as JSON text (compared as text: no decoding).
        public var tracked: [TrackedField: String] { StoredCardForm.tracked(fromText: trackedText) }
        /// A hash of the stored card's JSON.
        public var fingerprint: String

        public init(firstSeen: Date, goneSince: Date?, position: Int, trackedText: String, fingerprint: String) {
            self.firstSeen = firstSeen
            self.goneSince = goneSince
            self.position = position
            self.trackedText = trackedText
            self.fingerprint = fingerprint
        }
    }

    public init(listing: LiveListing, known: [String: Known]) {
        var listed = Set<String>()
        for (position, card) in listing.cards.enumerated() where listed.insert(card.id).inserted {
            let json = StoredCardForm.json(card)
            let print = StoredCardForm.fingerprint(json)
            guard let before = known[card.id] else {
                writes.append(Write(position: position, firstSeen: listing.at, changed: true, json: json, fingerprint: print, onlySeen: false))
                movesVersion = true
                continue
            }
            // The same JSON line has the same tracked values: only a changed card is compared.
            let changed = print != before.fingerprint
            if changed {
                let now = Self.tracked(card)
                let stored = before.tracked
                for field in TrackedField.allCases {
                    let old = stored[field] ?? "null"
                    let new = now[field] ?? "null"
                    if old != new {
                        changes.append(CardChange(id: card.id, field: field, at: listing.at,
                                                  before: StoredCardForm.value(fromJSON: old), after: StoredCardForm.value(fromJSON: new)))
                    }
                }
            }
            if changed || before.goneSince != nil { movesVersion = true }
            writes.append(Write(position: position, firstSeen: before.firstSeen, changed: changed, json: changed ? json : [],
                                fingerprint: print, onlySeen: !changed && before.goneSince == nil && before.position == position))
        }
        guard listing.complete else { return }
        if known.isEmpty {
            firstRanks = Dictionary(uniqueKeysWithValues: writes.enumerated().map { ($1.position, $0) })
        }
        for (id, before) in known where before.goneSince == nil && !listed.contains(id) {
            gone.append(id)
        }
        gone.sort()
        if !gone.isEmpty { movesVersion = true }
    }

    /// The tracked values of `card` as JSON text, as stored beside it.
    public static func tracked(_ card: Card) -> [TrackedField: String] {
        Dictionary(uniqueKeysWithValues: TrackedField.allCases.map { ($0, $0.text(of: card)) })
    }
}

/// The card as the store writes it: its JSON line (the documented card format), and a
/// hash of that line that tells a changed card without decoding the stored one.
public enum StoredCardForm {
    public static func json(_ card: Card) -> [UInt8] {
        var bytes: [UInt8] = []
        JSONLines.append(card, to: &bytes)
        return bytes
    }

    public static func fingerprint(_ json: [UInt8]) -> String {
        String(FNV1a.hash(json), radix: 16)
    }

    public static func card(_ json: Data) -> Card? {
        try? JSONBody.tape.decode(Card.self, from: json)
    }

    /// The tracked values as stored: one line per field, in ``TrackedField``'s order, each
    /// the value's JSON text (which holds no raw line break).
    public static func trackedText(_ tracked: [TrackedField: String]) -> String {
        TrackedField.allCases.map { tracked[$0] ?? "null" }.joined(separator: "\n")
    }

    /// ``trackedText(_:)`` of `card`'s values, written without a dictionary between (every
    /// card recorded passes through here).
    public static func trackedText(of card: Card) -> String {
        TrackedField.allCases.map { $0.text(of: card) }.joined(separator: "\n")
    }

    public static func tracked(fromText text: String) -> [TrackedField: String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == TrackedField.allCases.count else { return [:] }
        return Dictionary(uniqueKeysWithValues: zip(TrackedField.allCases, lines.map(String.init)))
    }

    public static func value(fromJSON text: String) -> JSONValue {
        (try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))) ?? .null
    }
}

/// Each person's reading marks on the kept cards (read, starred), beside the cards and
/// never in them: a refresh that changes a card leaves its marks.
public protocol ReadingMarkStore: Sendable {
    /// The same marks, `person`'s (``StoreUser``).
    func marks(of person: Int) -> any ReadingMarkStore
    /// Sets `mark` on the kept cards of `ids` for the person, at `at` (a card read or
    /// starred before keeps its first time); ids the store keeps no card of are skipped.
    /// The ids it kept, in `ids`' order.
    func mark(_ ids: [String], _ mark: ReadingMark, at: Date) async throws -> [String]
    /// Marks read, at `at`, every unread kept card of `sources` (every source when nil)
    /// first seen at or before `seenBy`: "everything up to now", so that what a refresh adds
    /// meanwhile stays unread. How many it marked.
    func markRead(seenBy: Date, sources: [String]?, at: Date) async throws -> Int
    /// Per source, how many of its kept cards are unread (a source with none is absent).
    func unreadCounts() async throws -> [String: Int]
    /// The person's marks' change counter: moved by every ``mark(_:_:at:)`` and
    /// ``markRead(seenBy:sources:at:)`` that changed something, by whichever process wrote
    /// it (another replica, `aggregate mark`). 0 before the first. `serve` keeps a
    /// person's reader page while it and every source's counter stand.
    func marksVersion() async throws -> Int
    /// The numbers (``KeptDates/number``) of the person's kept cards of `sources` that
    /// `filter` keeps, lowest first: an app's list of unread or starred items.
    func numbers(_ filter: ReadingFilter, of sources: [String]) async throws -> [Int64]
}

/// The search index over the kept cards.
public protocol CardSearchIndex: Sendable {
    /// The same index, its answers carrying `person`'s marks.
    func searching(as person: Int) -> any CardSearchIndex
    /// The kept cards `search` finds, gone ones too, ranked (``CardSearch/ranked(_:)``):
    /// `offset` of them skipped, at most `limit` given, with how many it found.
    func search(_ search: CardSearch, offset: Int, limit: Int) async throws -> StoredPage
    /// Indexes for search the cards recorded since it last ran, for a store that indexes
    /// apart from recording (``search(_:offset:limit:)`` does it first, so a search finds
    /// every card recorded before it; `serve` does it after each refresh, so its searches do
    /// not wait). How many cards it indexed.
    func updateSearch() async throws -> Int
    /// The kept cards, gone ones too, with `person`'s marks, that share a same-item key
    /// (``ItemKeys``) with any of `ids`' cards — those cards themselves not among them — by
    /// id: the candidates ``ItemMatcher`` decides over for a page, looked up by key instead
    /// of found by comparing every kept card. A key more than ``ItemKeys/widest`` cards
    /// share finds none. A store that indexes apart from recording writes a card's keys
    /// with its search row (``updateSearch()``).
    func cards(sharingItemKeysWith ids: [String]) async throws -> [KeptCard]
}

extension CardSearchIndex where Self: CardStore {
    /// Nothing to do: this store indexes as it records (or searches every card).
    public func updateSearch() async throws -> Int { 0 }

    /// Every kept card, searched and ranked here: the in-memory store's way, and the
    /// specification of the stores' indexes.
    public func search(_ search: CardSearch, offset: Int, limit: Int) async throws -> StoredPage {
        let kept = try await cards(of: search.sources.isEmpty ? nil : search.sources)
        let byID = Dictionary(kept.map { ($0.card.id, $0) }, uniquingKeysWith: { first, _ in first })
        let found = search.ranked(kept.map { ($0.card, $0.dates.firstSeen) })
        let start = min(max(offset, 0), found.count)
        let page = found[start...].prefix(max(limit, 0)).compactMap { byID[$0.id] }
        return StoredPage(cards: page, total: found.count)
    }

    /// Every kept card's keys worked out here: the in-memory store's way, and the
    /// specification of the stores' key tables.
    public func cards(sharingItemKeysWith ids: [String]) async throws -> [KeptCard] {
        let wanted = Set(ids)
        guard !wanted.isEmpty else { return [] }
        let kept = try await cards(of: nil)
        let keys = kept.map { ItemKeys.of($0.card) }
        var holders: [Int64: [Int]] = [:]
        for (index, cardKeys) in keys.enumerated() {
            for key in cardKeys { holders[key, default: []].append(index) }
        }
        // Each key of the asked cards once.
        let asked = Set(kept.indices.filter { wanted.contains(kept[$0].card.id) }.flatMap { keys[$0] })
        return ItemKeys.candidates(sharing: asked, holders: holders).map { kept[$0] }
            .filter { !wanted.contains($0.card.id) }.sorted { $0.card.id < $1.card.id }
    }
}
