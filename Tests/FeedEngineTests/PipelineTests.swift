@testable import FeedConfig
import FeedCore
@testable import FeedEngine
import FeedFormats
import Foundation
import Synchronization
import Testing

/// SplitMix64: a small seeded generator so every generated case can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A generated case: a few sources with random cards (ties, missing keys and
/// cross-source duplicates on purpose) and a page size.
struct GeneratedFeed {
    var cardsBySource: [(id: String, cards: [Card])]
    var pageSize: Int

    init(seed: UInt64) {
        var rng = SeededGenerator(state: seed)
        let ids = Array(["alpha", "beta", "gamma", "delta"].prefix(Int.random(in: 1...4, using: &rng)))
        pageSize = Int.random(in: 1...15, using: &rng)
        cardsBySource = ids.map { id in
            let count = Int.random(in: 0...45, using: &rng)
            let cards = (0..<count).map { n -> Card in
                // Some ids collide across sources: same upstream id under a shared prefix.
                let shared = Int.random(in: 0..<8, using: &rng) == 0
                var card = Card(source: shared ? "shared" : id, upstreamID: "\(shared ? Int.random(in: 0..<5, using: &rng) : n)",
                                kind: Int.random(in: 0..<3, using: &rng) == 0 ? .deal : .item,
                                title: ["Mug", "mug", "Émile", "apple", "Zebra", "Bowl"].randomElement(using: &rng)!)
                if Int.random(in: 0..<5, using: &rng) > 0 {
                    card.price = Price(amount: Decimal(Int.random(in: 1...6, using: &rng)) / 2, currency: "EUR")
                }
                if Int.random(in: 0..<4, using: &rng) > 0 {
                    card.published = Date(timeIntervalSince1970: Double(Int.random(in: 0...5, using: &rng)) * 86_400)
                }
                return card
            }
            return (id, cards)
        }
    }

    var upstream: MemoryUpstream {
        MemoryUpstream(Dictionary(uniqueKeysWithValues: cardsBySource.map { ($0.id, $0.cards) }), pageSize: pageSize)
    }

    var runner: FeedRunner {
        FeedRunner(config: .memory(cardsBySource.map(\.id)), registry: SourceRegistry([MemorySource.self]),
                   transports: upstream)
    }

    /// The reference feed order, written independently of the engine: round-robin.
    var referenceFeed: [Card] {
        var merged: [Card] = []
        var round = 0
        while cardsBySource.contains(where: { round < $0.cards.count }) {
            for source in cardsBySource where round < source.cards.count { merged.append(source.cards[round]) }
            round += 1
        }
        var seen = Set<String>()
        return merged.filter { seen.insert($0.id).inserted }
    }
}

@Suite struct PipelineTests {
    static let seeds: [UInt64] = Array(1...40)

    func allPages(_ runner: FeedRunner, sort: SortKey, order: SortDirection?, perPage: Int) async throws -> [Card] {
        var cards: [Card] = []
        for page in 1... {
            let result = try await runner.run(FeedQuery(sort: sort, order: order, page: page, perPage: perPage))
            if result.cards.isEmpty { break }
            cards += result.cards
        }
        return cards
    }

    @Test(arguments: seeds)
    func pagesConcatenateToTheWholeFeedInRoundRobinOrder(seed: UInt64) async throws {
        let feed = GeneratedFeed(seed: seed)
        let perPage = Int(seed % 7) + 1
        let whole = try await feed.runner.run(FeedQuery(perPage: FeedQuery.maxPerPage)).cards
        #expect(whole.map(\.id) == feed.referenceFeed.map(\.id))
        let paged = try await allPages(feed.runner, sort: .feed, order: nil, perPage: perPage)
        #expect(paged.map(\.id) == whole.map(\.id))
        #expect(Set(paged.map(\.id)).count == paged.count, "no card twice")
    }

    @Test(arguments: seeds)
    func sortedPagesAreStableSortsOfTheFeed(seed: UInt64) async throws {
        let feed = GeneratedFeed(seed: seed)
        let reference = feed.referenceFeed
        for (key, direction) in [(SortKey.price, SortDirection.ascending), (.price, .descending), (.date, .descending),
                                 (.title, .ascending), (.source, .ascending)] {
            let paged = try await allPages(feed.runner, sort: key, order: direction, perPage: 6)
            #expect(paged.count == reference.count)
            // Independent check of the documented order: keyed cards in key order, ties
            // in feed order, cards without the key last in feed order.
            let position = Dictionary(uniqueKeysWithValues: reference.enumerated().map { ($1.id, $0) })
            for (a, b) in zip(paged, paged.dropFirst()) {
                let ordered: Bool
                switch key {
                case .price: ordered = precedes(a.price?.amount, b.price?.amount, direction, position[a.id]!, position[b.id]!)
                case .date: ordered = precedes(a.published, b.published, direction, position[a.id]!, position[b.id]!)
                case .title:
                    let fold = { (c: Card) in c.title.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil) }
                    ordered = precedes(fold(a), fold(b), direction, position[a.id]!, position[b.id]!)
                default: ordered = precedes(a.source, b.source, direction, position[a.id]!, position[b.id]!)
                }
                #expect(ordered, "\(key) \(direction): \(a.id) before \(b.id)")
            }
        }
    }

    private func precedes<K: Comparable>(_ a: K?, _ b: K?, _ direction: SortDirection, _ pa: Int, _ pb: Int) -> Bool {
        switch (a, b) {
        case let (x?, y?) where x != y: direction == .ascending ? x < y : x > y
        case (_?, nil): true
        case (nil, _?): false
        default: pa < pb
        }
    }

    @Test(arguments: seeds)
    func feedPagesReadOnlyTheUpstreamPagesTheyNeed(seed: UInt64) async throws {
        let generated = GeneratedFeed(seed: seed)
        // One source at a time: page p of the feed needs ceil(p * perPage / pageSize)
        // upstream pages, never more than the source has.
        for source in generated.cardsBySource {
            let upstream = MemoryUpstream([source.id: source.cards], pageSize: generated.pageSize)
            let runner = FeedRunner(config: .memory([source.id]), registry: SourceRegistry([MemorySource.self]),
                                    transports: upstream)
            let perPage = Int(seed % 5) + 3
            let page = Int(seed % 3) + 1
            _ = try await runner.run(FeedQuery(page: page, perPage: perPage))
            let available = max(1, (source.cards.count + generated.pageSize - 1) / generated.pageSize)
            let unique = Set(source.cards.map(\.id)).count
            let needed = (page * perPage + generated.pageSize - 1) / generated.pageSize
            if unique == source.cards.count {
                #expect(upstream.requests(for: source.id) == min(needed, available))
            } else {
                #expect(upstream.requests(for: source.id) <= available)
            }
        }
    }

    @Test func lazyPagingAcrossTwoSourcesAsksOnlyTheBottleneck() async throws {
        let a = (0..<30).map { Card(source: "a", upstreamID: "\($0)", kind: .item, title: "a\($0)") }
        let b = (0..<3).map { Card(source: "b", upstreamID: "\($0)", kind: .item, title: "b\($0)") }
        let upstream = MemoryUpstream(["a": a, "b": b], pageSize: 5)
        let runner = FeedRunner(config: .memory(["a", "b"]), registry: SourceRegistry([MemorySource.self]),
                                transports: upstream)
        let result = try await runner.run(FeedQuery(perPage: 10))
        #expect(result.cards.map(\.id) == ["a:0", "b:0", "a:1", "b:1", "a:2", "b:2", "a:3", "a:4", "a:5", "a:6"])
        #expect(upstream.requests(for: "a") == 2)
        #expect(upstream.requests(for: "b") == 1)
        #expect(!result.isComplete)
    }

    @Test func dedupeKeepsTheFirstAndCounts() async throws {
        let a = [Card(source: "x", upstreamID: "1", kind: .item, title: "first"),
                 Card(source: "a", upstreamID: "2", kind: .item, title: "a2")]
        let b = [Card(source: "x", upstreamID: "1", kind: .item, title: "second")]
        let runner = FeedRunner(config: .memory(["a", "b"]), registry: SourceRegistry([MemorySource.self]),
                                transports: MemoryUpstream(["a": a, "b": b], pageSize: 10))
        let result = try await runner.run(FeedQuery())
        #expect(result.cards.map(\.title) == ["first", "a2"])
        #expect(result.duplicatesDropped == 1)
    }

    /// Dropping copies by sorted hashes keeps exactly what a set of ids keeps: the first of
    /// each id in feed order, across values and packed lists, over many seeded cases.
    @Test(arguments: 0..<20) func dedupeKeepsWhatASetOfIdsKeeps(seed: UInt64) {
        var random = SeededGenerator(state: seed)
        let lists = (0..<Int.random(in: 1...6, using: &random)).map { number in
            let cards = (0..<Int.random(in: 0...300, using: &random)).map { _ in
                Card(source: ["a", "b"].randomElement(using: &random) ?? "a", upstreamID: "\(Int.random(in: 0..<150, using: &random))",
                     kind: .item, title: "t")
            }
            return number.isMultiple(of: 2) ? CardList(cards) : CardList(packing: cards)
        }
        let positions = FeedOrdering.interleave(lists.map(\.count))
        var seen = Set<String>()
        let expected = positions.filter { seen.insert(lists.id(at: $0)).inserted }
        let (kept, dropped) = FeedOrdering.dedupe(positions, in: lists)
        #expect(kept == expected)
        #expect(dropped == positions.count - expected.count)
    }

    @Test func filtersByKindAndAccentInsensitiveText() async throws {
        let cards = [
            Card(source: "a", upstreamID: "1", kind: .deal, title: "Crème brûlée set"),
            Card(source: "a", upstreamID: "2", kind: .item, title: "Creme jar"),
            Card(source: "a", upstreamID: "3", kind: .deal, title: "Mug", summary: "CRÈME coloured"),
            Card(source: "a", upstreamID: "4", kind: .deal, title: "Plate"),
        ]
        let runner = FeedRunner(config: .memory(["a"]), registry: SourceRegistry([MemorySource.self]),
                                transports: MemoryUpstream(["a": cards], pageSize: 2))
        let result = try await runner.run(FeedQuery(kind: .deal, text: "creme"))
        #expect(result.cards.map(\.id) == ["a:1", "a:3"])
    }

    @Test func pastTheEndIsEmptyAndCountsPages() async throws {
        let cards = (0..<12).map { Card(source: "a", upstreamID: "\($0)", kind: .person, title: "P\($0)") }
        let upstream = MemoryUpstream(["a": cards], pageSize: 6)
        let runner = FeedRunner(config: .memory(["a"]), registry: SourceRegistry([MemorySource.self]), transports: upstream)
        let result = try await runner.run(FeedQuery(page: 2))
        #expect(result.cards.isEmpty)
        #expect(result.pageCount == 1)
        #expect(result.matched == 12)
        #expect(upstream.requests(for: "a") == 2)
    }

    @Test func unknownSourceIsAUsageErrorListingTheKnownOnes() async {
        let runner = FeedRunner(config: .memory(["a", "b"]), registry: SourceRegistry([MemorySource.self]),
                                transports: MemoryUpstream([:], pageSize: 1))
        await #expect(throws: UsageError.self) { try await runner.run(FeedQuery(sourceIDs: ["c"])) }
        do {
            _ = try await runner.run(FeedQuery(sourceIDs: ["c"]))
        } catch {
            #expect(error.description == "unknown source \"c\" in Sources.yml (known: a, b)")
        }
    }

    @Test func aRepeatedCursorFailsTheSourceInsteadOfLooping() async throws {
        struct LoopingUpstream: TransportProvider, HTTPTransport {
            func tiers(for source: SourceConfig, plugin: any FeedSource.Type) -> [TransportTier] {
                [TransportTier(origin: nil, transport: self)]
            }
            func send(_ request: HTTPRequest) async throws -> HTTPResponse {
                let page = MemorySource.Page(cards: [Card(source: "a", upstreamID: request.url.query ?? "", kind: .post, title: "t")],
                                             next: "2")
                return HTTPResponse(status: 200, body: try JSONEncoder().encode(page), url: request.url)
            }
        }
        let runner = FeedRunner(config: .memory(["a"]), registry: SourceRegistry([MemorySource.self]),
                                transports: LoopingUpstream())
        let result = try await runner.run(FeedQuery(perPage: 50))
        #expect(result.cards.count == 2)
        #expect(result.outcomes[0].failure == "the upstream returned cursor \"2\" twice; stopped to avoid an endless loop")
        #expect(RunStatus(outcomes: result.outcomes, strict: false) == .partial)
    }

    @Test func budgetsEndTheWalk() async throws {
        let cards = (0..<100).map { Card(source: "a", upstreamID: "\($0)", kind: .post, title: "P\($0)") }
        var config = FeedConfig.memory(["a"])
        config.sources[0].maxPages = 3
        let upstream = MemoryUpstream(["a": cards], pageSize: 10)
        let runner = FeedRunner(config: config, registry: SourceRegistry([MemorySource.self]), transports: upstream)
        let result = try await runner.run(FeedQuery(sort: .title))
        #expect(result.matched == 30)
        #expect(upstream.requests(for: "a") == 3)
        #expect(result.outcomes[0].budgetNote == "stopped after 3 pages (max_pages: 3)")

        config.sources[0].maxPages = 10
        config.sources[0].maxItems = 25
        let capped = FeedRunner(config: config, registry: SourceRegistry([MemorySource.self]),
                                transports: MemoryUpstream(["a": cards], pageSize: 10))
        #expect(try await capped.run(FeedQuery(perPage: 100)).cards.count == 25)
    }

    /// Every card of the run (`--all`) is held packed until it is printed: each comes back
    /// exactly as a page of them held as values gives it, in every order.
    @Test(arguments: seeds)
    func everyCardReadsBackExactlyFromItsPackedList(seed: UInt64) async throws {
        let feed = GeneratedFeed(seed: seed)
        let orders: [(SortKey, SortDirection?)] = [(.feed, nil), (.feed, .descending), (.price, .ascending), (.date, .descending),
                                                   (.title, .ascending), (.source, .descending)]
        for (key, direction) in orders {
            let all = try await feed.runner.run(FeedQuery(sort: key, order: direction, perPage: FeedQuery.everyCard))
            let page = try await feed.runner.run(FeedQuery(sort: key, order: direction, perPage: FeedQuery.maxPerPage))
            #expect(Array(all.cards) == Array(page.cards), "\(key) \(String(describing: direction))")
            #expect(all.matched == page.matched)
            #expect(all.duplicatesDropped == page.duplicatesDropped)
        }
    }

    /// A run reads its sources a few at a time (``FeedRunner/sourcesAtOnce``), and reads every one.
    @Test func aRunReadsAtMostSourcesAtOnce() async throws {
        let ids = (0..<12).map { "s\($0)" }
        let cards = Dictionary(uniqueKeysWithValues: ids.map { id in (id, [Card(source: id, upstreamID: "1", kind: .post, title: id)]) })
        let upstream = PacedUpstream(MemoryUpstream(cards, pageSize: 10))
        var runner = FeedRunner(config: .memory(ids), registry: SourceRegistry([MemorySource.self]), transports: upstream)
        runner.sourcesAtOnce = 4
        let result = try await runner.run(FeedQuery(perPage: FeedQuery.everyCard))
        #expect(Set(result.cards.map(\.id)) == Set(ids.map { "\($0):1" }))
        #expect(upstream.mostAtOnce == 4)
    }
}

/// ``MemoryUpstream`` answering each request after 100 ms, counting how many it answers at once.
final class PacedUpstream: TransportProvider, HTTPTransport {
    private let upstream: MemoryUpstream
    private let counts = Mutex((now: 0, most: 0))

    init(_ upstream: MemoryUpstream) {
        self.upstream = upstream
    }

    var mostAtOnce: Int { counts.withLock { $0.most } }

    func tiers(for source: SourceConfig, plugin: any FeedSource.Type) -> [TransportTier] {
        [TransportTier(origin: nil, transport: self)]
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        counts.withLock { counts in
            counts.now += 1
            counts.most = max(counts.most, counts.now)
        }
        defer { counts.withLock { $0.now -= 1 } }
        try await Task.sleep(for: .milliseconds(100))
        return try await upstream.send(request)
    }
}
