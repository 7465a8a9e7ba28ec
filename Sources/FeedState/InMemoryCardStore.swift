import FeedConfig
import FeedCore
import FeedFormats
import Foundation

/// A ``CardStore`` in memory, for tests and runs that keep nothing: the same rules
/// (``ListingMerge``) as the stores on disk.
public actor InMemoryCardStore: CardStore, ReadingMarkStore, CardSearchIndex {
    private struct Row {
        var kept: KeptCard
        var tracked: [TrackedField: String]
        var fingerprint: String
        var bytes: Int
    }

    private var rows: [String: Row] = [:]
    private var changes: [CardChange] = []
    private var counters: [String: Int] = [:]
    private var tags: [String: String] = [:]
    /// Each person's marks, beside the cards (a recording replaces a card, not its marks).
    private var marks: [Int: [String: (read: Date?, starred: Date?)]] = [:]
    /// Each person's ``CardStore/marksVersion()``.
    private var marksVersions: [Int: Int] = [:]
    /// The last number given to a card (``KeptDates/number``).
    private var lastNumber: Int64 = 0

    public init() {}

    /// The same store with `person`'s marks.
    public nonisolated func reading(as person: Int) -> any CardStore {
        person == StoreUser.default ? self : InMemoryPersonView(store: self, person: person)
    }

    public nonisolated func marks(of person: Int) -> any ReadingMarkStore {
        person == StoreUser.default ? self : InMemoryPersonView(store: self, person: person)
    }

    public nonisolated func searching(as person: Int) -> any CardSearchIndex {
        person == StoreUser.default ? self : InMemoryPersonView(store: self, person: person)
    }

    /// The row's card with `person`'s marks.
    private func kept(_ row: Row, for person: Int = StoreUser.default) -> KeptCard {
        var kept = row.kept
        if let mark = marks[person]?[kept.card.id] {
            kept.dates.readAt = mark.read
            kept.dates.starredAt = mark.starred
        }
        return kept
    }

    /// The row's card starred if anyone starred it: what retention looks at.
    private func keptForRetention(_ row: Row) -> KeptCard {
        var kept = row.kept
        kept.dates.starredAt = marks.values.compactMap { $0[kept.card.id]?.starred }.min()
        return kept
    }

    public func record(_ listings: [LiveListing]) {
        for listing in listings {
            // The listing merged last (confirmed by its upstream, or read again from the same
            // bytes): its cards are seen again, nothing else moves.
            let isStored = listing.tag != nil && tags[listing.source] == listing.tag
            if listing.unchanged || listing.complete && isStored {
                guard isStored else { continue }
                for (id, row) in rows where row.kept.card.source == listing.source && row.kept.dates.goneSince == nil {
                    rows[id]?.kept.dates.lastSeen = listing.at
                }
                continue
            }
            tags[listing.source] = listing.tagToKeep
            let known = rows.filter { $0.value.kept.card.source == listing.source }.mapValues { row in
                ListingMerge.Known(firstSeen: row.kept.dates.firstSeen, goneSince: row.kept.dates.goneSince, position: row.kept.position,
                                   trackedText: StoredCardForm.trackedText(row.tracked), fingerprint: row.fingerprint)
            }
            let merge = ListingMerge(listing: listing, known: known)
            for write in merge.writes {
                let card = listing.cards[write.position]
                var dates = KeptDates(firstSeen: write.firstSeen, lastSeen: listing.at)
                if let number = rows[card.id]?.kept.dates.number {
                    dates.number = number
                } else {
                    lastNumber += 1
                    dates.number = lastNumber
                }
                if write.changed {
                    rows[card.id] = Row(kept: KeptCard(card: card, dates: dates, position: write.position), tracked: ListingMerge.tracked(card),
                                        fingerprint: write.fingerprint, bytes: write.json.count)
                } else {
                    rows[card.id]?.kept.dates = dates
                    rows[card.id]?.kept.position = write.position
                }
            }
            for id in merge.gone { rows[id]?.kept.dates.goneSince = listing.at }
            changes += merge.changes
            if merge.movesVersion { counters[listing.source, default: 0] += 1 }
        }
    }

    public func cards(of sources: [String]?) -> [KeptCard] {
        cards(of: sources, for: StoreUser.default)
    }

    func cards(of sources: [String]?, for person: Int) -> [KeptCard] {
        rows.values.map { kept($0, for: person) }.filter { sources?.contains($0.card.source) ?? true }
            .sorted { a, b in
                (a.card.source, a.dates.goneSince == nil ? 0 : 1, a.position, a.card.id) < (b.card.source, b.dates.goneSince == nil ? 0 : 1, b.position, b.card.id)
            }
    }

    public func page(_ query: StoredPageQuery) -> StoredPage {
        query.page(of: cards(of: query.sources))
    }

    public func firstSeen(of ids: [String]) -> [String: Date] {
        var seen: [String: Date] = [:]
        for id in ids { seen[id] = rows[id]?.kept.dates.firstSeen }
        return seen
    }

    public func card(id: String) -> KeptCard? {
        card(id: id, for: StoreUser.default)
    }

    func card(id: String, for person: Int) -> KeptCard? {
        rows[id].map { kept($0, for: person) }
    }

    public func cards(ids: [String]) -> [KeptCard] {
        cards(ids: ids, for: StoreUser.default)
    }

    func cards(ids: [String], for person: Int) -> [KeptCard] {
        var seen = Set<String>()
        return ids.filter { seen.insert($0).inserted }.compactMap { card(id: $0, for: person) }
    }

    public func history(of id: String) -> [CardChange] {
        changes.filter { $0.id == id }
    }

    public func versions() -> [String: Int] {
        counters
    }

    public func purge(_ policy: @Sendable (String) -> KeepPolicy, now: Date, limit: Int) -> Int {
        let doomed = Array(CardRetention.doomed(rows.values.map(keptForRetention), policy: policy, now: now).prefix(limit))
        for id in doomed {
            if let source = rows[id]?.kept.card.source {
                counters[source, default: 0] += 1
                tags[source] = nil
            }
            rows[id] = nil
            for person in marks.keys { marks[person]?[id] = nil }
        }
        changes.removeAll { doomed.contains($0.id) }
        return doomed.count
    }

    public func listingTags() -> [String: String] {
        tags
    }

    public func mark(_ ids: [String], _ mark: ReadingMark, at: Date) -> [String] {
        self.mark(ids, mark, at: at, for: StoreUser.default)
    }

    func mark(_ ids: [String], _ mark: ReadingMark, at: Date, for person: Int) -> [String] {
        var marked: [String] = []
        for id in ids where rows[id] != nil {
            var current = marks[person]?[id] ?? (nil, nil)
            switch mark {
            case .read: current.read = current.read ?? at
            case .unread: current.read = nil
            case .star: current.starred = current.starred ?? at
            case .unstar: current.starred = nil
            }
            marks[person, default: [:]][id] = current.read == nil && current.starred == nil ? nil : current
            marked.append(id)
        }
        if !marked.isEmpty { marksVersions[person, default: 0] += 1 }
        return marked
    }

    public func markRead(seenBy: Date, sources: [String]?, at: Date) -> Int {
        markRead(seenBy: seenBy, sources: sources, at: at, for: StoreUser.default)
    }

    func markRead(seenBy: Date, sources: [String]?, at: Date, for person: Int) -> Int {
        let unread = rows.values.map { kept($0, for: person) }.filter { card in
            card.dates.readAt == nil && card.dates.firstSeen <= seenBy && (sources?.contains(card.card.source) ?? true)
        }
        return mark(unread.map(\.card.id), .read, at: at, for: person).count
    }

    public func unreadCounts() -> [String: Int] {
        unreadCounts(for: StoreUser.default)
    }

    public func marksVersion() -> Int {
        marksVersion(for: StoreUser.default)
    }

    func marksVersion(for person: Int) -> Int {
        marksVersions[person] ?? 0
    }

    func unreadCounts(for person: Int) -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in rows.values where marks[person]?[row.kept.card.id]?.read == nil { counts[row.kept.card.source, default: 0] += 1 }
        return counts
    }

    public func ids(ofNumbers numbers: [Int64]) -> [Int64: String] {
        let wanted = Set(numbers)
        var found: [Int64: String] = [:]
        for (id, row) in rows where wanted.contains(row.kept.dates.number) { found[row.kept.dates.number] = id }
        return found
    }

    public func cards(numbered span: CardNumbers, of sources: [String], limit: Int) -> [KeptCard] {
        cards(numbered: span, of: sources, limit: limit, for: StoreUser.default)
    }

    func cards(numbered span: CardNumbers, of sources: [String], limit: Int, for person: Int) -> [KeptCard] {
        let kept = cards(of: sources, for: person).sorted { $0.dates.number < $1.dates.number }
        let chosen: [KeptCard]
        switch span {
        case .after(let number): chosen = kept.filter { $0.dates.number > number }
        case .before(let number): chosen = kept.filter { $0.dates.number < number }.reversed()
        case .among(let numbers):
            let wanted = Set(numbers)
            chosen = kept.filter { wanted.contains($0.dates.number) }
        }
        return Array(chosen.prefix(max(limit, 0)))
    }

    public func numbers(_ filter: ReadingFilter, of sources: [String]) -> [Int64] {
        numbers(filter, of: sources, for: StoreUser.default)
    }

    func numbers(_ filter: ReadingFilter, of sources: [String], for person: Int) -> [Int64] {
        cards(of: sources, for: person).filter { filter.includes($0.dates) }.map(\.dates.number).sorted()
    }

    public func ids(of source: String) -> [String] {
        rows.values.filter { $0.kept.card.source == source }.map(\.kept.card.id)
    }

    public func summary() -> [StoreSummary] {
        Dictionary(grouping: rows.values, by: { $0.kept.card.source }).map { source, rows in
            let ids = Set(rows.map(\.kept.card.id))
            return StoreSummary(source: source, cards: rows.count, gone: rows.filter { $0.kept.dates.goneSince != nil }.count,
                                historyRows: changes.filter { ids.contains($0.id) }.count, bytes: rows.map(\.bytes).reduce(0, +))
        }.sorted { $0.source < $1.source }
    }
}

/// ``InMemoryCardStore`` with another person's marks (``CardStore/reading(as:)``).
struct InMemoryPersonView: CardStore, ReadingMarkStore, CardSearchIndex {
    let store: InMemoryCardStore
    let person: Int

    func reading(as person: Int) -> any CardStore { store.reading(as: person) }
    func marks(of person: Int) -> any ReadingMarkStore { store.marks(of: person) }
    func searching(as person: Int) -> any CardSearchIndex { store.searching(as: person) }
    func record(_ listings: [LiveListing]) async throws { await store.record(listings) }
    func cards(of sources: [String]?) async throws -> [KeptCard] { await store.cards(of: sources, for: person) }
    func page(_ query: StoredPageQuery) async throws -> StoredPage { query.page(of: await store.cards(of: query.sources, for: person)) }
    func card(id: String) async throws -> KeptCard? { await store.card(id: id, for: person) }
    func cards(ids: [String]) async throws -> [KeptCard] { await store.cards(ids: ids, for: person) }
    func firstSeen(of ids: [String]) async throws -> [String: Date] { await store.firstSeen(of: ids) }
    func history(of id: String) async throws -> [CardChange] { await store.history(of: id) }
    func versions() async throws -> [String: Int] { await store.versions() }
    func purge(_ policy: @Sendable (String) -> KeepPolicy, now: Date, limit: Int) async throws -> Int {
        await store.purge(policy, now: now, limit: limit)
    }
    func summary() async throws -> [StoreSummary] { await store.summary() }
    func listingTags() async throws -> [String: String] { await store.listingTags() }
    func mark(_ ids: [String], _ mark: ReadingMark, at: Date) async throws -> [String] { await store.mark(ids, mark, at: at, for: person) }
    func markRead(seenBy: Date, sources: [String]?, at: Date) async throws -> Int {
        await store.markRead(seenBy: seenBy, sources: sources, at: at, for: person)
    }
    func unreadCounts() async throws -> [String: Int] { await store.unreadCounts(for: person) }
    func marksVersion() async throws -> Int { await store.marksVersion(for: person) }
    func ids(of source: String) async throws -> [String] { await store.ids(of: source) }
    func ids(ofNumbers numbers: [Int64]) async throws -> [Int64: String] { await store.ids(ofNumbers: numbers) }
    func cards(numbered span: CardNumbers, of sources: [String], limit: Int) async throws -> [KeptCard] {
        await store.cards(numbered: span, of: sources, limit: limit, for: person)
    }
    func numbers(_ filter: ReadingFilter, of sources: [String]) async throws -> [Int64] {
        await store.numbers(filter, of: sources, for: person)
    }
}

/// Which cards retention removes: gone longer than `goneFor`, and past `maxCards` of a
/// source, gone ones first and then the least recently seen; never a starred card. The SQL stores say the same
/// in their queries; this is their specification and the in-memory store's code.
public enum CardRetention {
    /// Cards removed per purge transaction (``CardStore/purge(_:now:limit:)``): small, so
    /// that a reader waits for one small batch at most.
    public static let batch = 500

    public static func doomed(_ cards: [KeptCard], policy: (String) -> KeepPolicy, now: Date) -> [String] {
        var doomed: [String] = []
        // A starred card is the person's to keep: neither removed nor counted.
        let unstarred = cards.filter { $0.dates.starredAt == nil }
        for (source, kept) in Dictionary(grouping: unstarred, by: \.card.source).sorted(by: { $0.key < $1.key }) {
            let keep = policy(source)
            let expired = kept.filter { card in card.dates.goneSince.map { now.timeIntervalSince($0) > keep.goneFor } ?? false }
            let expiredIDs = Set(expired.map(\.card.id))
            doomed += expiredIDs.sorted()
            let remaining = kept.filter { !expiredIDs.contains($0.card.id) }
            if remaining.count > keep.maxCards {
                let oldestFirst = remaining.sorted { a, b in
                    ((a.dates.goneSince == nil ? 1 : 0), a.dates.lastSeen, a.card.id) < ((b.dates.goneSince == nil ? 1 : 0), b.dates.lastSeen, b.card.id)
                }
                doomed += oldestFirst.prefix(remaining.count - keep.maxCards).map(\.card.id)
            }
        }
        return doomed
    }
}
