import FeedConfig
import FeedCore
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

    private(set) var cards: [Card] = []
    private(set) var outcome: SourceOutcome
    private(set) var exhausted = false

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
                            tracker: tracker, describe: tier.describe, settle: tier.settle, memo: tier.memo)
            }
        } catch {
            fail("cannot start: \(PlainWords.describe(error))")
        }
        if self.tiers.isEmpty && !exhausted {
            fail("no way to reach it (offline, and no recorded snapshot)")
        }
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
    ) async -> (value: T, origin: Card.Origin?, read: [String: Double])? {
        var retriedPastCache = false
        while tierIndex < tiers.count {
            let tier = tiers[tierIndex]
            do {
                // Only the network is bounded by the deadline; fallbacks are local and fast.
                let source = tier.source
                let value = tier.origin == nil ? try await deadline.run { try await body(source) } : try await body(source)
                // What the source read but could make nothing of counts as unreadable: it is
                // not stored, and the next tier (the last good copy) is tried.
                if let reason = unusable(value) { throw SourceError.failed(reason) }
                let read = await tier.settle(true)
                if let origin = tier.origin {
                    outcome.status = .fallback(origin, liveFailure: liveFailure, servedBy: tier.describe())
                }
                return (value, tier.origin, read)
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
        // The live tier's remembered page while it is fresh.
        if tierIndex == 0, let memo = tiers.first?.memo, let page = await memo.lookup(cursor: cursor) {
            count(pageWith: page.skipped, notes: page.notes, total: page.total)
            remembered = page
            return await takeRemembered()
        }
        guard let (page, origin) = await readPage(after: cursor) else { return }
        count(pageWith: page.skipped, notes: page.notes, total: page.total)
        if await accept(page.cards, origin: origin) { advance(to: page.next) }
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
            guard let (live, origin) = await readPage(after: cursor) else { return }
            if await accept(Array(live.cards.dropFirst(page.taken)), origin: origin) { advance(to: live.next) }
        }
    }

    /// The page after `cursor` from the first tier that can serve it, remembered when the
    /// live tier served it.
    private mutating func readPage(after cursor: String?) async -> (page: SourcePage, origin: Card.Origin?)? {
        let unusable = { (page: SourcePage) -> String? in
            guard page.cards.isEmpty, let first = page.skipped.first else { return nil }
            return "no record could be read (\(page.skipped.count) skipped; the first, \(first.path): \(first.reason))"
        }
        guard let (page, origin, read) = await withTiers(unusable: unusable, { try await $0.page(after: cursor) }) else { return nil }
        if origin == nil, tierIndex == 0, let memo = tiers.first?.memo { memo.remember(page, cursor: cursor, readFrom: read) }
        return (page, origin)
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
        if let (card, origin, _) = await withTiers({ try await $0.detail(id: id) }) {
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
