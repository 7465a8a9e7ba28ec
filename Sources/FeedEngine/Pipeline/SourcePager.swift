import FeedConfig
import FeedCore
import FeedFormats
import FeedState
import FeedSupport
import Foundation

/// One source's walk through its pages during a run: its cursor, the cards it has
/// produced so far (already filtered), its budget, and which tier is serving it.
struct SourcePager: Sendable {
    private struct Tier: Sendable {
        var origin: Card.Origin?
        var source: any FeedSource
        var tracker: RequestTracker
        var describe: @Sendable () -> String
        var settle: @Sendable (Bool) async -> [String: Double]
        var memo: PageMemo?
        var cache: CachingTransport?
    }

    /// What the tiers answered a call with.
    private enum TierAnswer<T: Sendable> {
        case answered(T, origin: Card.Origin?, read: [String: Double])
        /// The upstream confirmed the body the expected remembered page was mapped from.
        case unchanged
    }

    let config: SourceConfig
    let filter: @Sendable (Card) -> Bool
    /// The top-level `filters:` and the source's own, applied off the cooperative threads.
    private var judge: RuleJudge
    private var tiers: [Tier] = []
    private var tierIndex = 0
    private var trail = CursorTrail()
    /// Why the live tier failed, and each fallback after it, for the outcome.
    private var liveFailure: String?
    private var fallbackFailures: [String] = []
    /// Shared by every live request of this source in this run.
    private let deadline: Deadline

    /// The remembered page being read, until its last card is taken.
    private var remembered: RememberedPage?
    /// Some of the cards were read from the page memo (``Holding/packed`` keeps them as they are).
    private var readRemembered = false

    /// For `refresh`: the store's ``LiveListing/tag`` for this source's last complete
    /// listing. A one-page listing whose page is remembered and whose tag is this one is
    /// not read at all (``isUnchanged``).
    var storedTag: String?
    /// What this walk has read from so far, hashed into ``listingTag``: the memo's
    /// fingerprint (code and settings), the budgets, and per page the stored bodies it
    /// was mapped from; nil once a page came from anything else (or with filter rules,
    /// whose verdicts may change with time).
    private var tagText: String?
    /// The listing is the one the store merged last (``storedTag``); ``cards`` is empty.
    private(set) var isUnchanged = false

    /// `full_content:`: each page's cards given their articles before the rules see them.
    var articles: WholeArticles? {
        didSet { outcome.articles = articles == nil ? nil : WholeArticles.Report() }
    }

    private(set) var cards: [Card] = []
    /// The cards read, packed once they were handed on (``Holding/packed``); ``cards`` is then empty.
    private var packed: CardList?
    private(set) var outcome: SourceOutcome
    private(set) var exhausted = false
    /// The walk's listing was handed on (``handOn(keeping:)``).
    private(set) var handedOn = false

    /// The cards read, as the run holds them.
    var list: CardList { packed ?? CardList(cards) }

    /// What a walk keeps of its cards once its listing was handed on.
    enum Holding {
        /// Nothing: they were recorded, and the run prints none of them (`refresh`); the
        /// outcome is all the walk still gives.
        case none
        /// The cards as they are.
        case values
        /// The cards in their compact layout (``CardList/init(packing:)``), for a run that
        /// holds every card until it prints them. As they are: a list of more than
        /// ``packedListLimit`` cards; a list read from the page memo (a warm run reads each
        /// card from the memo's bytes, and packing it again and making it once more to print
        /// it made the warm feed job 1.23x slower, 0.467 against 0.379 s, 11 runs); and a list
        /// whose cards carry details (an entry's body, a product's specs): such a card is
        /// mostly its text, which packing copies and makes again for little saved (the cold
        /// feed job took 1.12x the time, 0.2-0.35 s more CPU, for 62 MiB instead of 86).
        case packed
    }

    /// The most cards a list is packed with. A list is packed as its source ends, while
    /// the others are still read, so that a run's cards are never all held as values at
    /// once; a long list is held in both forms while it is packed, and a run's few long
    /// lists end together (the bulk job's four lists of 7,000 cards: 96.8 MiB at the peak
    /// packed, 94.4 as they are, 9 runs).
    static let packedListLimit = 1_000

    /// Notes that the walk's listing was handed on, once it was read to its end, and keeps
    /// of its cards what `holding` says.
    mutating func handOn(keeping holding: Holding) {
        handedOn = true
        switch holding {
        case .none: cards = []
        case .values: break
        case .packed:
            guard cards.count <= Self.packedListLimit, !readRemembered, cards.allSatisfy(\.details.isEmpty) else { return }
            packed = CardList(packing: cards)
            cards = []
        }
    }

    init(config: SourceConfig, type: any FeedSource.Type, tiers: [TransportTier], rules: [CardFilter] = [], now: Date = Date(),
         filter: @escaping @Sendable (Card) -> Bool) {
        self.config = config
        self.filter = filter
        self.judge = RuleJudge(filters: rules, now: now)
        self.outcome = SourceOutcome(id: config.id, url: config.url)
        self.deadline = Deadline(seconds: config.deadline)
        do {
            self.tiers = try tiers.map { tier in
                let tracker = RequestTracker(tier.transport)
                return Tier(origin: tier.origin, source: try type.init(settings: config.settings, http: tracker),
                            tracker: tracker, describe: tier.describe, settle: tier.settle, memo: tier.memo, cache: tier.cache)
            }
        } catch {
            fail("cannot start: \(PlainWords.describe(error))")
        }
        if self.tiers.isEmpty && !exhausted {
            fail("no way to reach it (offline, and no recorded snapshot)")
        }
        if let memo = self.tiers.first?.memo, judge.isEmpty {
            tagText = "\(memo.sourceFingerprint) \(config.maxItems) \(config.maxPages)\n"
        }
    }

    /// Names what the listing was read from (``LiveListing/tag``), when every page so far
    /// was read from stored bodies.
    var listingTag: String? {
        tagText.map { String(FNV1a.hash($0), radix: 16) }
    }

    /// Adds a page, read from `bodies`, to ``tagText``: each body by what it holds
    /// (`digests`), so that the same bytes name the same listing however they were read —
    /// fetched again into a cold cache, confirmed by a 304, fresh in the cache; a body
    /// stored by an earlier version, whose contents are not known, by its stamp.
    private mutating func tag(page cursor: String?, readFrom bodies: [String: Double], digests: [String: String] = [:], origin: Card.Origin?) {
        guard tagText != nil else { return }
        guard origin == nil, !bodies.isEmpty else { return tagText = nil }
        // By contents alone where known: a cache key is a keyed hash, another with another
        // cache's secret.
        tagText? += "\(cursor ?? "")\t" + bodies.map { key, stamp in digests[key].map { "#\($0)" } ?? "\(key)=\(stamp)" }
            .sorted().joined(separator: "\t") + "\n"
    }

    private mutating func fail(_ message: String) {
        outcome.status = .failed(message, fallbackFailures: fallbackFailures)
        exhausted = true
    }

    /// `cause (url)`: a failure with the URL it happened on, secrets redacted.
    private func explain(_ error: any Error, tier: Tier) -> String {
        var cause = (error as? SourceError)?.description ?? "\(error)"
        if case .badStatus(let status)? = error as? SourceError, status == 401 || status == 403 {
            cause += credentialHint(status)
        }
        // A local program's page key (`exec://…`) tells the user nothing the cause does not.
        guard let url = tier.tracker.lastURL, ["http", "https"].contains(url.scheme?.lowercased()) else { return cause }
        return "\(cause) (\(url.redactedString))"
    }

    /// What a 401 or 403 means for this source: which of its settings holds credentials
    /// (never their values), or that it has none.
    private func credentialHint(_ status: Int) -> String {
        let query = URLComponents(url: config.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        let settings = config.headers.keys.sorted().map { "headers: \($0)" }
            + query.map(\.name).filter(Redaction.isSecretParameter).map { "the url's \($0)=" }
        guard !settings.isEmpty else {
            return ": the upstream wants credentials, and \(config.path) in Sources.yml sends none (add them under headers:)"
        }
        let refused = status == 401 ? "refused the credentials" : "refused access with the credentials"
        return ": the upstream \(refused) in \(settings.joined(separator: " and ")) of \(config.path) in Sources.yml; check them"
    }

    /// Runs `body` on the current tier, falling through to the next tier when it
    /// throws anything but `notFound`. Returns nil once every tier has failed.
    private mutating func withTiers<T: Sendable>(
        unusable: (T) -> String? = { _ in nil },
        _ body: @escaping @Sendable (any FeedSource) async throws -> T
    ) async -> TierAnswer<T>? {
        var retriedPastCache = false
        while tierIndex < tiers.count {
            let tier = tiers[tierIndex]
            do {
                // Only the network is bounded by the deadline; fallbacks are local and fast.
                let source = tier.source
                let value: T
                do {
                    value = tier.origin == nil ? try await deadline.run { try await body(source) } : try await body(source)
                } catch where tier.cache?.takeConfirmation() == true {
                    _ = await tier.settle(true)
                    return .unchanged
                }
                if tier.cache?.takeConfirmation() == true {
                    // The source went on past the confirmation; its answer is not needed.
                    _ = await tier.settle(true)
                    return .unchanged
                }
                // What the source read but could make nothing of counts as unreadable: it is
                // not stored, and the next tier (the last good copy) is tried.
                if let reason = unusable(value) { throw SourceError.failed(reason) }
                let read = await tier.settle(true)
                if let origin = tier.origin {
                    outcome.status = .fallback(origin, liveFailure: liveFailure, servedBy: tier.describe())
                }
                return .answered(value, origin: tier.origin, read: read)
            } catch SourceError.noDetailEndpoint {
                _ = await tier.settle(true)
                outcome.detail = .noEndpoint
                return nil
            } catch SourceError.noDetail(let reason) {
                _ = await tier.settle(true)
                outcome.detail = .unavailable(reason)
                return nil
            } catch let error as SourceError where { if case .notFound = error { true } else { false } }() {
                _ = await tier.settle(true)
                outcome.detail = .notFound(error.description)
                return nil
            } catch {
                let dropped = await tier.settle(false)
                // A stored copy the source could not read is damage, not the upstream's
                // answer: the live tier asks the upstream once more, past the cache.
                if tier.origin == nil, !dropped.isEmpty, !retriedPastCache {
                    retriedPastCache = true
                    continue
                }
                let message = explain(error, tier: tier)
                if tier.origin == nil { liveFailure = message } else { fallbackFailures.append(message) }
                tierIndex += 1
            }
        }
        fail(liveFailure ?? fallbackFailures.last ?? "no response")
        return nil
    }

    /// Reads the next upstream page, unless the source is exhausted or its budget spent;
    /// or, while a remembered page is being read, its next cards.
    mutating func fetchNext() async {
        guard !exhausted else { return }
        if remembered != nil { return await takeRemembered() }
        if outcome.pages >= config.maxPages {
            outcome.budgetNote = "stopped after \(outcome.pages) pages (max_pages: \(config.maxPages))"
            exhausted = true
            return
        }
        let cursor = trail.current
        var expected: PageMemo.Remembered?
        if tierIndex == 0, let memo = tiers.first?.memo {
            // A listing that may be the stored one is decided on what it was read from:
            // its page is read only if it is not.
            let mayBeStored = storedTag != nil && cursor == nil
            let found = await memo.lookup(cursor: cursor, servesFresh: tiers.first?.cache?.refresh != true, readingPage: !mayBeStored)
            if let found, found.fresh {
                // The live tier's remembered page while it is fresh.
                if cursor == nil { outcome.answer = .cacheWithinTTL }
                return await takeRemembered(found, cursor: cursor)
            }
            if let found, let (key, storedAt) = found.readFrom.first {
                // Asked again; when the upstream confirms the body (304), the page mapped from it is served.
                tiers.first?.cache?.expectUnchanged(key: key, storedAt: storedAt)
                expected = found
            }
        }
        switch await readPage(after: cursor) {
        case .read(let page, let origin, let bodies)?:
            if cursor == nil { outcome.answer = .read }
            tag(page: cursor, readFrom: bodies, digests: tiers.first?.cache?.takeDigests() ?? [:], origin: origin)
            count(pageWith: page.skipped, notes: page.notes, total: page.total)
            if await accept(page.cards, origin: origin) { advance(to: page.next) }
        case .unchanged?:
            guard let expected else { return fail("the cache confirmed a page it was not asked about") }
            if cursor == nil { outcome.answer = .revalidated }
            await takeRemembered(expected, cursor: cursor)
        case nil:
            return
        }
    }

    /// Starts reading a remembered page; or, when it is the whole listing and that listing
    /// is the one the store merged last, reads nothing.
    private mutating func takeRemembered(_ found: PageMemo.Remembered, cursor: String?) async {
        let confirmed = tiers.first?.cache?.takeDigests() ?? [:]
        tag(page: cursor, readFrom: found.readFrom, digests: found.digests.merging(confirmed) { _, confirmed in confirmed }, origin: nil)
        // The stored tag is a complete listing's: equal after the first page, that page was
        // the whole listing, read to its end within the budgets, nothing skipped.
        if cursor == nil, let storedTag, storedTag == listingTag {
            outcome.pages = 1
            outcome.unchanged = true
            isUnchanged = true
            exhausted = true
            return
        }
        var page = found.page
        if page == nil { page = await tiers.first?.memo?.page(cursor: cursor) }
        guard let page else {
            // Gone since it was looked up: read from the cached body (or the upstream).
            tagText = nil
            guard case .read(let live, let origin, _)? = await readPage(after: cursor) else { return }
            count(pageWith: live.skipped, notes: live.notes, total: live.total)
            if await accept(live.cards, origin: origin) { advance(to: live.next) }
            return
        }
        count(pageWith: page.skipped, notes: page.notes, total: page.total)
        remembered = page
        readRemembered = true
        await takeRemembered()
    }

    /// The next cards of the remembered page. A page damaged past its first cards is read
    /// again (from the cached body, else the upstream or its fallbacks) and remembered
    /// anew, without the cards already taken.
    private mutating func takeRemembered() async {
        guard var page = remembered else { return }
        do {
            let cards = try page.take(Self.rememberedCardsPerStep)
            remembered = page.remaining > 0 ? page : nil
            if await accept(cards, origin: nil), remembered == nil { advance(to: page.next) }
        } catch {
            remembered = nil
            let cursor = trail.current
            tagText = nil
            guard case .read(let live, let origin, _)? = await readPage(after: cursor) else { return }
            if await accept(Array(live.cards.dropFirst(page.taken)), origin: origin) { advance(to: live.next) }
        }
    }

    /// The page after `cursor` from the first tier that can serve it, remembered when the
    /// live tier served it.
    private mutating func readPage(after cursor: String?) async -> PageAnswer? {
        let unusable = { (page: SourcePage) -> String? in
            guard page.cards.isEmpty, let first = page.skipped.first else { return nil }
            return "no record could be read (\(page.skipped.count) skipped; the first, \(first.path): \(first.reason))"
        }
        switch await withTiers(unusable: unusable, { try await $0.page(after: cursor) }) {
        case .answered(let page, let origin, let read)?:
            if origin == nil, tierIndex == 0, let memo = tiers.first?.memo { memo.remember(page, cursor: cursor, readFrom: read) }
            return .read(page, origin: origin, readFrom: read)
        case .unchanged?:
            return .unchanged
        case nil:
            return nil
        }
    }

    private enum PageAnswer {
        /// The page, and the stored bodies it was read from.
        case read(SourcePage, origin: Card.Origin?, readFrom: [String: Double])
        /// The upstream confirmed the body of the remembered page expected for this cursor.
        case unchanged
    }

    /// How many cards of a remembered page one step reads: a first page needs a few per
    /// source; a full dump reads them all, this many at a time.
    static let rememberedCardsPerStep = 64

    private mutating func count(pageWith skipped: [SkippedRecord], notes: [String], total: Int?) {
        outcome.pages += 1
        outcome.skipped += skipped
        outcome.notes += notes
        if let total { outcome.upstreamTotal = total }
    }

    /// Takes `page`'s cards into the feed; false once the budget is spent.
    private mutating func accept(_ page: [Card], origin: Card.Origin?) async -> Bool {
        var page = page
        if let articles, var report = outcome.articles {
            // Within the budget only: a card the budget leaves out needs no article.
            let room = max(0, config.maxItems - outcome.produced)
            page = await articles.fill(Array(page.prefix(room)), report: &report) + page.dropFirst(room)
            outcome.articles = report
        }
        let reasons = await judge.reasons(for: page, budget: config.maxItems - outcome.produced)
        if !judge.isEmpty { outcome.ruleTimeouts = judge.timeoutReport }
        // A first page whose every card is kept becomes the list itself: no second copy
        // while the page is still being remembered (10,000 cards are 3.2 MB inline).
        if cards.isEmpty, origin == nil, outcome.produced + page.count < config.maxItems,
           reasons.allSatisfy({ $0 == nil }), page.allSatisfy({ card in !card.title.isEmpty && filter(card) }) {
            cards = page
            outcome.produced += page.count
            return true
        }
        // Room for the page at once (5,000 cards appended one by one were copied into a
        // twice larger array a dozen times), still doubling for many small pages.
        let needed = cards.count + min(page.count, max(0, config.maxItems - outcome.produced))
        if needed > cards.capacity { cards.reserveCapacity(max(needed, 2 * cards.capacity)) }
        for (card, reason) in zip(page, reasons) where !card.title.isEmpty {
            outcome.produced += 1
            if let reason {
                outcome.ruleDrops[reason, default: 0] += 1
            } else if filter(card) {
                if let origin {
                    var served = card
                    served.origin = origin
                    cards.append(served)
                } else {
                    cards.append(card)
                }
            }
            if outcome.produced >= config.maxItems {
                outcome.budgetNote = "stopped after \(outcome.produced) cards (max_items: \(config.maxItems))"
                exhausted = true
                return false
            }
        }
        return true
    }

    private mutating func advance(to next: String?) {
        do {
            if try !trail.advance(to: next) { exhausted = true }
        } catch {
            fail("\(error)")
        }
    }

    /// Reads pages until the source is exhausted.
    mutating func fetchAll() async {
        while !exhausted { await fetchNext() }
    }

    /// The card with upstream id `id`: the source's detail endpoint if it has one,
    /// else (or when the detail cannot be had) the card from its pages, within the budget.
    /// Every card `matches` accepts, reading the pages to the end (or the budget).
    mutating func cards(where matches: (Card) -> Bool) async -> [Card] {
        while !exhausted { await fetchNext() }
        return cards.filter(matches)
    }

    mutating func detail(id: String) async -> Card? {
        let cardID = "\(config.id):\(id)"
        if case .answered(let card, let origin, _)? = await withTiers({ try await $0.detail(id: id) }) {
            var card = card
            card.origin = origin
            return card
        }
        if case .notFound? = outcome.detail { return nil }
        if outcome.detail == nil, let failure = outcome.failure {
            // The detail failed on every tier: the list card is still worth showing.
            outcome = SourceOutcome(id: config.id, url: config.url)
            outcome.detail = .failed(failure)
            liveFailure = nil
            fallbackFailures = []
            tierIndex = 0
            exhausted = false
        }
        while true {
            if let card = cards.first(where: { $0.id == cardID }) { return card }
            if exhausted { break }
            await fetchNext()
        }
        if outcome.failure == nil {
            outcome.detail = .notFound(outcome.budgetNote == nil
                ? "no item \"\(id)\""
                : "no item \"\(id)\" in the first \(outcome.pages) pages (\(outcome.produced) cards); raise max_pages or max_items to look further")
        }
        return nil
    }
}
