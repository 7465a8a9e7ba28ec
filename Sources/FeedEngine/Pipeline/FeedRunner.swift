import FeedConfig
import FeedCore
import FeedFormats
import FeedState
import Foundation

/// A misuse of the command line that the engine detects (exit code 2).
public struct UsageError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// The cards of the requested page, and how every source fared.
public struct FeedResult: Sendable {
    public var cards: FeedCards
    public var query: FeedQuery
    /// Matching cards known after dedupe (all of them when ``isComplete``).
    public var matched: Int
    /// Every source was read to its end (or its budget), so ``matched`` is the total.
    public var isComplete: Bool
    public var duplicatesDropped: Int
    public var outcomes: [SourceOutcome]
    /// What each source answered live, for the card store.
    public var listings: [LiveListing] = []

    public var pageCount: Int? {
        isComplete ? (matched + query.perPage - 1) / query.perPage : nil
    }
}

/// Runs the pipeline: one child task per source, lazy paging, merge, dedupe, sort, page.
public struct FeedRunner: Sendable {
    public let config: FeedConfig
    public let registry: SourceRegistry
    public let transports: any TransportProvider
    /// How many sources a run reads at once (a pool of workers, as Miniflux's). Each waits
    /// its turn before it starts, not in the middle of a request: 500 sources started at
    /// once and waiting for their host's connections held 12 MiB of suspended calls (24 KB
    /// each) at the start of a cold run of 500 pages on one host.
    public var sourcesAtOnce = 64

    public init(config: FeedConfig, registry: SourceRegistry, transports: any TransportProvider) {
        self.config = config
        self.registry = registry
        self.transports = transports
    }

    /// The sources a query names (every enabled one when it names none; none when the
    /// file lists none). Naming a disabled source runs it anyway.
    public func select(_ ids: [String]) throws(UsageError) -> [SourceConfig] {
        try Self.select(ids, in: config)
    }

    /// The same, for a command that reads no upstream (`--stored`).
    public static func select(_ ids: [String], in config: FeedConfig) throws(UsageError) -> [SourceConfig] {
        guard !ids.isEmpty else {
            let enabled = config.sources.filter(\.enabled)
            // A list with nothing in it yet (`serve` from nothing) is an empty feed.
            if enabled.isEmpty, !config.sources.isEmpty {
                throw UsageError("every source in \(config.file) is disabled; enable one or pass --source ID")
            }
            return enabled
        }
        var selected: [SourceConfig] = []
        var named = Set<String>()
        for id in ids where named.insert(id).inserted {
            guard let source = config.source(id: id) else {
                throw UsageError("unknown source \"\(id)\" in \(config.file) (known: \(config.sources.map(\.id).joined(separator: ", ")))")
            }
            if let name = source.unsetVariables.first {
                throw UsageError("source \"\(id)\" is disabled in \(config.file) and needs environment variable \(name), which is not set; set it to run the source")
            }
            selected.append(source)
        }
        return selected
    }

    /// `show` finds a card whatever the rules say: they shape the feed, not what one id is.
    private func makePager(_ source: SourceConfig, query: FeedQuery, rules: Bool = true) -> SourcePager {
        // Config validation guarantees a registered plugin.
        let type = registry.type(for: source.plugin)!
        var pager = SourcePager(config: source, type: type,
                                tiers: transports.tiers(for: source, plugin: type), rules: rules ? [config.filters, source.filters] : [],
                                filter: { query.matches($0) })
        pager.articles = transports.articles(for: source)
        return pager
    }

    /// `eachRead`: where a run that reads every card hands each source's live listing as
    /// soon as that source is read to its end, so recording it overlaps reading the others,
    /// merging and printing (the result's `listings` then hold only what a paged run read).
    /// `at`: the time of the run's listings, whenever each is handed on.
    public func run(_ query: FeedQuery, at: Date = FeedRunner.wholeSecond(),
                    eachRead: (@Sendable (LiveListing) async -> Void)? = nil) async throws(UsageError) -> FeedResult {
        var feeds = try select(query.sourceIDs).map { makePager($0, query: query) }
        // Saturating: a page number past any feed must not trap; it is simply empty.
        let (product, overflow) = query.page.multipliedReportingOverflow(by: query.perPage)
        let needed = overflow ? Int.max : product
        // A source's listing is handed on once it is read to its end (in a page of a few,
        // once the page is read); without `eachRead`, the result's listings gather them.
        let gathered = GatheredListings()
        let listingsTo = eachRead ?? { await gathered.add($0) }
        let finished: @Sendable (SourcePager) async -> Void = { feed in
            guard let listing = Self.listings([feed], filtered: query.filters, at: at).first else { return }
            await listingsTo(listing)
        }
        // A run that prints every card holds each source's cards packed from when its listing
        // is handed on until they are printed, unless merging reads them all as values. A
        // page of a few holds them as they are: packing cards that are mostly not printed
        // would only cost time.
        let holding: SourcePager.Holding = query.perPage == FeedQuery.everyCard && query.merge == nil ? .packed : .values
        if query.isLazy {
            while true {
                let open = feeds.indices.filter { !feeds[$0].exhausted }
                let rounds = open.map { feeds[$0].list.count }.min()
                if open.isEmpty { break }
                // Every card asked for (`--all`): no count of them can reach it.
                if needed < FeedQuery.everyCard,
                   FeedOrdering.uniqueCount(feeds.map(\.list), rounds: rounds, upTo: needed) >= needed { break }
                let bottleneck = open.filter { feeds[$0].list.count == rounds }
                // A page of a few hands its listings on after it is read, as its sources end or not.
                await fetch(&feeds, only: bottleneck, finished: holding == .packed ? finished : nil, holding: holding) {
                    await $0.fetchNext()
                }
            }
        } else {
            await fetch(&feeds, only: Array(feeds.indices), finished: finished, holding: holding) { await $0.fetchAll() }
        }
        var lists = feeds.map(\.list)
        var (unique, dropped) = FeedOrdering.dedupe(determinedPrefix(feeds), in: lists)
        if let decisions = query.merge { (lists, unique) = FeedOrdering.mergeItems(unique, in: lists, decisions: decisions) }
        let sorted = FeedOrdering.sort(unique, in: lists, by: query.sort, order: query.effectiveOrder)
        let (skip, skipOverflow) = (query.page - 1).multipliedReportingOverflow(by: query.perPage)
        let start = skipOverflow || skip < 0 ? sorted.count : min(skip, sorted.count)
        let page = FeedCards(lists: lists, positions: Array(sorted[start..<min(start + query.perPage, sorted.count)]))
        return FeedResult(cards: page, query: query, matched: unique.count,
                          isComplete: feeds.allSatisfy(\.exhausted), duplicatesDropped: dropped,
                          outcomes: feeds.map(\.outcome),
                          listings: await gathered.listings + Self.listings(feeds.filter { !$0.handedOn }, filtered: query.filters, at: at))
    }

    /// Every card of the chosen sources within their budgets, in feed order and deduped,
    /// with how each source fared and what each answered live: what a digest compares
    /// against its state, and what `refresh` records.
    public func collect(_ sourceIDs: [String]) async throws(UsageError) -> Collected {
        try await collect(sourceIDs, eachRead: nil)
    }

    /// ``collect(_:)``, handing each source's live listing to `eachRead` as soon as that
    /// source is read, so that recording it overlaps fetching the others (`refresh`); the
    /// result then holds only the outcomes: each source's cards are let go once handed on
    /// (kept to the end and merged for nobody, the 25,000 cards of a cold refresh of 500
    /// feeds raised its peak memory from 134 to 158 MB, and freeing them took 40 ms at its end).
    /// `storedTags` are the card store's ``CardStore/listingTags()``: a source whose listing
    /// is still the one the store merged is given as ``LiveListing/unchanged(source:tag:at:)``,
    /// without its cards (nor are they in the result's cards).
    public func collect(_ sourceIDs: [String], storedTags: [String: String] = [:],
                        eachRead: (@Sendable (LiveListing) async -> Void)?) async throws(UsageError) -> Collected {
        let query = FeedQuery(sourceIDs: sourceIDs)
        // One time for the run's listings, whenever each is handed on: cards a run first
        // sees are first seen together, and a page by date keeps them in feed order (a
        // source read in the next second sorted apart from the rest).
        let at = Self.wholeSecond()
        var feeds = try select(sourceIDs).map { source in
            var pager = makePager(source, query: query)
            pager.storedTag = storedTags[source.id]
            return pager
        }
        var finished: (@Sendable (SourcePager) async -> Void)?
        if let eachRead {
            finished = { feed in
                guard let listing = Self.listings([feed], filtered: false, at: at).first else { return }
                await eachRead(listing)
            }
        }
        await fetch(&feeds, only: Array(feeds.indices), finished: finished) { await $0.fetchAll() }
        if eachRead != nil { return Collected(cards: [], outcomes: feeds.map(\.outcome), listings: []) }
        let lists = feeds.map(\.list)
        let merged = FeedOrdering.dedupe(FeedOrdering.interleave(lists.map(\.count)), in: lists).positions
        return Collected(cards: lists.cards(at: merged), outcomes: feeds.map(\.outcome),
                         listings: Self.listings(feeds, filtered: false, at: at))
    }

    /// Now, to the second: the card store's times are printed in RFC 3339 without a fraction.
    public static func wholeSecond() -> Date {
        Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
    }

    /// What ``collect(_:)`` gathered.
    public struct Collected: Sendable {
        public var cards: [Card]
        public var outcomes: [SourceOutcome]
        public var listings: [LiveListing]
    }

    /// What each source answered live, for the card store: its cards that no fallback
    /// served (none of a source with `record: false`), and whether they are all it lists —
    /// read to the end, live, within its budgets and unfiltered — so that what is missing
    /// is gone. A source that answered nothing live gives no listing.
    static func listings(_ feeds: [SourcePager], filtered: Bool, at: Date) -> [LiveListing] {
        feeds.compactMap { feed in
            guard feed.config.record else { return nil }
            if feed.isUnchanged, let tag = feed.listingTag { return .unchanged(source: feed.config.id, tag: tag, at: at) }
            // Usually every card is live: the source's own array is shared, not copied.
            let live = feed.cards.contains { $0.origin != nil } ? feed.cards.filter { $0.origin == nil } : feed.cards
            guard !live.isEmpty || feed.outcome.status == .live && feed.exhausted else { return nil }
            let complete = !filtered && feed.exhausted && feed.outcome.status == .live && feed.outcome.budgetNote == nil
                && live.count == feed.cards.count && feed.outcome.skipped.isEmpty
            return LiveListing(source: feed.config.id, cards: live, complete: complete, at: at, tag: feed.listingTag)
        }
    }

    /// `query` answered from kept cards alone (`--stored`, `serve`'s readers): the cards of
    /// the chosen sources, filtered, deduped, sorted and paged as ``run(_:)`` does, each
    /// source's list in the order given (the card store's: its last listing's order, its
    /// gone cards after).
    public static func stored(_ kept: [Card], config: FeedConfig, query: FeedQuery) throws(UsageError) -> FeedResult {
        let sources = try select(query.sourceIDs, in: config)
        let bySource = Dictionary(grouping: kept, by: \.source)
        var lists = sources.map { source in CardList((bySource[source.id] ?? []).filter { query.matches($0) }) }
        var (unique, dropped) = FeedOrdering.dedupe(FeedOrdering.interleave(lists.map(\.count)), in: lists)
        if let decisions = query.merge { (lists, unique) = FeedOrdering.mergeItems(unique, in: lists, decisions: decisions) }
        let sorted = FeedOrdering.sort(unique, in: lists, by: query.sort, order: query.effectiveOrder)
        let (skip, overflow) = (query.page - 1).multipliedReportingOverflow(by: query.perPage)
        let start = overflow || skip < 0 ? sorted.count : min(skip, sorted.count)
        let page = FeedCards(lists: lists, positions: Array(sorted[start..<min(start + query.perPage, sorted.count)]))
        let outcomes = sources.map { SourceOutcome(id: $0.id, url: $0.url) }
        return FeedResult(cards: page, query: query, matched: unique.count, isComplete: true, duplicatesDropped: dropped,
                          outcomes: outcomes)
    }

    /// `query` as a page the card store can make itself from its indexes (feed order, price,
    /// date, title or source, no `--kind` or `--query`: a filter changes each source's rounds), over
    /// `sources` in their order; nil when it cannot, and ``stored(_:config:query:)`` orders
    /// every kept card instead.
    public static func storedPage(_ query: FeedQuery, sources: [String], reading: ReadingFilter? = nil) -> StoredPageQuery? {
        // Merged, the page's items are made with their copies found by key (``ItemsOnPage``).
        guard !query.filters else { return nil }
        let order: StoredPageQuery.Order
        switch query.sort {
        case .feed: order = .feed
        case .price: order = .price
        case .date: order = .published
        case .source: order = .source
        case .title: order = .title
        }
        let (skip, overflow) = (query.page - 1).multipliedReportingOverflow(by: query.perPage)
        return StoredPageQuery(sources: sources, order: order, descending: query.effectiveOrder == .descending,
                               offset: overflow ? Int.max - query.perPage : max(skip, 0), limit: query.perPage, reading: reading)
    }

    /// The result of a page the card store made (``storedPage(_:sources:)``).
    public static func stored(_ page: StoredPage, query: FeedQuery, sources: [SourceConfig]) -> FeedResult {
        FeedResult(cards: FeedCards(page.cards.map(\.card)), query: query, matched: page.total, isComplete: !page.totalIsAtLeast, duplicatesDropped: 0,
                   outcomes: sources.map { SourceOutcome(id: $0.id, url: $0.url) })
    }

    /// Waits for the cache writes of the runs so far, which go on behind them.
    public func finishWrites() async {
        await transports.finishWrites()
    }

    /// The merged cards whose place in the feed no further page can change: whole
    /// rounds up to the shortest list of a source that may still grow.
    private func determinedPrefix(_ feeds: [SourcePager]) -> [CardPosition] {
        let open = feeds.filter { !$0.exhausted }.map(\.list.count)
        return FeedOrdering.interleave(feeds.map(\.list.count), rounds: open.min())
    }

    /// Runs `step` on the chosen feeds concurrently, one child task each, at most
    /// ``sourcesAtOnce`` at a time; `finished` is given each feed whose step read it to its
    /// end, in that feed's task, which then keeps what `holding` says (without `finished`,
    /// its cards as they are).
    private func fetch(
        _ feeds: inout [SourcePager], only indices: [Int], finished: (@Sendable (SourcePager) async -> Void)? = nil,
        holding: SourcePager.Holding = .none, step: @escaping @Sendable (inout SourcePager) async -> Void
    ) async {
        await withTaskGroup(of: (Int, SourcePager).self) { group in
            var waiting = indices[...]
            func start(_ index: Int) {
                let feed = feeds[index]
                group.addTask {
                    var feed = feed
                    await step(&feed)
                    guard let finished, feed.exhausted else { return (index, feed) }
                    await finished(feed)
                    feed.handOn(keeping: holding)
                    return (index, feed)
                }
            }
            for index in waiting.prefix(max(1, sourcesAtOnce)) { start(index) }
            waiting = waiting.dropFirst(max(1, sourcesAtOnce))
            for await (index, feed) in group {
                feeds[index] = feed
                if let next = waiting.popFirst() { start(next) }
            }
        }
    }

    /// The listings a run handed on without `eachRead`, for its result.
    private actor GatheredListings {
        private(set) var listings: [LiveListing] = []

        func add(_ listing: LiveListing) {
            listings.append(listing)
        }
    }

    /// The result of `aggregate show`.
    public enum ShowResult: Sendable {
        case found(Card, SourceOutcome)
        case notFound(String, SourceOutcome)
        case failed(SourceOutcome)
    }

    /// One card by its id (`target:1`), from the source's detail endpoint or its pages.
    public func show(_ cardID: String) async throws(UsageError) -> ShowResult {
        guard let colon = cardID.firstIndex(of: ":"), colon != cardID.startIndex,
              cardID.index(after: colon) != cardID.endIndex else {
            throw UsageError("\"\(cardID)\" is not a card id; write SOURCE:ID, e.g. \(config.sources.first?.id ?? "cabify"):1")
        }
        let sourceID = String(cardID[..<colon])
        let upstreamID = String(cardID[cardID.index(after: colon)...])
        guard let source = try select([sourceID]).first else { throw UsageError("no source \(sourceID)") }
        var feed = makePager(source, query: FeedQuery(), rules: false)
        guard let shortened = ShortenedID(upstreamID) else {
            if let card = await feed.detail(id: upstreamID) { return .found(card, feed.outcome) }
            if case .notFound(let message)? = feed.outcome.detail { return .notFound("\(source.id): \(message)", feed.outcome) }
            return .failed(feed.outcome)
        }
        // The shortened form the text view prints: found in the pages, if only one card has it.
        let matches = await feed.cards { shortened.matches($0) }
        switch matches.count {
        case 1:
            // The card as `show` gives it for its whole id (its detail, where there is one).
            var exact = makePager(source, query: FeedQuery(), rules: false)
            if let card = await exact.detail(id: matches[0].upstreamID) { return .found(card, exact.outcome) }
            return .found(matches[0], feed.outcome)
        case 0:
            if feed.outcome.failure != nil { return .failed(feed.outcome) }
            return .notFound("\(source.id): no item \"\(upstreamID)\"", feed.outcome)
        default:
            let some = matches.prefix(3).map(\.id).joined(separator: ", ")
            return .notFound("\(source.id): \"\(upstreamID)\" matches \(matches.count) cards (\(some)\(matches.count > 3 ? ", …" : "")); give more of the id",
                             feed.outcome)
        }
    }
}
