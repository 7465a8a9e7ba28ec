import FeedConfig
import FeedCore
import FeedEngine
import FeedSourceTesting
import FeedState
import FeedStatePostgres
import Foundation
import Testing

/// Every implementation of the state seams — the response cache and page memo, the card
/// store, reading marks, the search index, accounts — keeps the same promises: in memory,
/// in SQLite, and (when a test server is configured) in PostgreSQL.
@Suite struct StoreContractTests {
    typealias Backend = StateUnderTest

    /// Opens a fresh state of `backend`, runs `body`, and removes it.
    func withState(_ backend: Backend, _ body: (EngineState) async throws -> Void) async throws {
        try await backend.with(body)
    }

    let t1 = Date(timeIntervalSince1970: 1_800_000_000.25)
    let t2 = Date(timeIntervalSince1970: 1_800_000_600.5)

    @Test(arguments: Backend.all) func responsesArePutTouchedAndForgotten(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let cache = state.cache
            let response = CachedResponse(key: "https://api.test/a?page=1", url: "https://api.test/a?page=1", status: 200,
                                          etag: "\"v1\"", lastModified: "Sat, 21 Nov 2026 10:00:00 GMT", maxAge: 60,
                                          body: Data("{\"items\":[]}".utf8), fetchedAt: t1, link: "<https://api.test/a?page=2>; rel=\"next\"")
            #expect(try await cache.response(forKey: response.key) == nil)
            try await cache.put(response)
            #expect(try await cache.response(forKey: response.key) == response)
            try await cache.touch(key: response.key, fetchedAt: t2, maxAge: nil)
            var touched = response
            touched.fetchedAt = t2
            touched.maxAge = nil
            #expect(try await cache.response(forKey: response.key) == touched)
            #expect(try await cache.stamp(key: response.key) == CacheStamp(storedAt: t1.timeIntervalSince1970,
                                                                           fetchedAt: t2.timeIntervalSince1970, maxAge: nil,
                                                                           etag: "\"v1\"", lastModified: "Sat, 21 Nov 2026 10:00:00 GMT"))
            try await cache.forget(key: response.key)
            #expect(try await cache.response(forKey: response.key) == nil)
            #expect(try await cache.stamp(key: response.key) == nil)
        }
    }

    @Test(arguments: Backend.all) func mappedPagesAreKeptForAWeek(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let old = MappedPageRecord(key: "old", responses: ["https://api.test/a": t1.timeIntervalSince1970],
                                       page: Data([0, 1, 2, 255]), created: t1)
            try await state.pageMemo.put(old)
            #expect(try await state.pageMemo.page(forKey: "old") == old)
            let new = MappedPageRecord(key: "new", responses: [:], page: Data(), created: t1.addingTimeInterval(8 * 86_400))
            try await state.pageMemo.put(new)
            #expect(try await state.pageMemo.page(forKey: "new") == new)
            #expect(try await state.pageMemo.page(forKey: "old") == nil)
        }
    }

    /// SQLite keeps a page of 1 MiB and more as a file in `bodies/`, named by its row:
    /// a replaced or expired page takes its file with it, and the sweep after a large body
    /// keeps it (it removes only old files that no row names).
    @Test func aLargeMappedPageIsAFileThatGoesWithItsRow() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-pages-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = try await EngineState.open(.directory(directory))
        let (cache, pages) = (state.cache, state.pageMemo)
        let bodies = directory.appendingPathComponent("bodies")
        func files() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: bodies.path)) ?? []).sorted() }

        let large = Data((0..<(1 << 20) + 7).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let first = MappedPageRecord(key: "big", responses: ["https://api.test/a": 1], page: large, created: t1)
        try await pages.put(first)
        #expect(try await pages.page(forKey: "big") == first)
        let pageFile = try #require(files().first)
        #expect(files() == [pageFile] && pageFile.hasSuffix("-\(large.count)"))

        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)],
                                              ofItemAtPath: bodies.appendingPathComponent(pageFile).path)
        try await cache.put(CachedResponse(key: "https://api.test/grid", url: "https://api.test/grid", status: 200, etag: nil,
                                           lastModified: nil, maxAge: nil, body: Data(repeating: 0x20, count: 1 << 20), fetchedAt: t1))
        #expect(files().count == 2 && files().contains(pageFile))

        var second = first
        second.page = large + Data([1])
        second.created = t2
        try await pages.put(second)
        #expect(try await pages.page(forKey: "big") == second)
        #expect(files().count == 2 && !files().contains(pageFile))

        try await pages.put(MappedPageRecord(key: "later", responses: [:], page: Data(), created: t2.addingTimeInterval(8 * 86_400)))
        #expect(try await pages.page(forKey: "big") == nil)
        #expect(files().count == 1)
    }

    /// A run that only reads (a warm page) opens one connection per file and writes
    /// nothing: the files are byte for byte as the last writer left them, with no `-wal`
    /// left behind. (GRDB's pool wrote and checkpointed a throwaway table on every open.)
    @Test func aRunThatOnlyReadsLeavesTheFilesAsTheyWere() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-reads-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let response = CachedResponse(key: "https://api.test/a", url: "https://api.test/a", status: 200, etag: "\"v1\"",
                                      lastModified: nil, maxAge: 60, body: Data("{\"items\":[]}".utf8), fetchedAt: t1)
        let page = MappedPageRecord(key: "page", responses: [response.key: 1], page: Data([1, 2, 3]), created: t1)
        func files() throws -> [String: Data] {
            try Dictionary(uniqueKeysWithValues: FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { $0.hasPrefix("cache.sqlite") || $0.hasPrefix("state.sqlite") }
                .map { ($0, try Data(contentsOf: directory.appendingPathComponent($0))) })
        }
        do {
            let state = try await EngineState.open(.directory(directory))
            try await state.cache.put(response)
            try await state.pageMemo.put(page)
        }
        let written = try files()
        #expect(written.keys.sorted() == ["cache.sqlite", "cache.sqlite.open-lock"])
        for _ in 0..<2 {
            do {
                let state = try await EngineState.open(.directory(directory))
                #expect(try await state.cache.response(forKey: response.key) == response)
                #expect(try await state.pageMemo.page(forKey: page.key) == page)
            }
            #expect(try files() == written)
        }
    }

    /// Where no file can be made (here `bodies` is a file, not a folder), a large page is
    /// kept in its row.
    @Test func aLargeMappedPageWithNowhereToGoStaysInItsRow() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-pages-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let pages = try await EngineState.open(.directory(directory)).pageMemo
        try Data("not a folder".utf8).write(to: directory.appendingPathComponent("bodies"))
        let page = MappedPageRecord(key: "big", responses: [:], page: Data(repeating: 7, count: 1 << 20), created: t1)
        try await pages.put(page)
        #expect(try await pages.page(forKey: "big") == page)
    }

    /// A card's first-seen time is the card store's, the one truth of it: kept from the
    /// recording that first had the card, through changes, gone and back; unknown ids absent.
    @Test(arguments: Backend.all) func aCardKeepsTheTimeItWasFirstSeen(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            try await store.record([listing([card("a", "1")], at: t1)])
            #expect(try await store.firstSeen(of: ["shop:a", "shop:b"]) == ["shop:a": t1])
            try await store.record([listing([card("a", "2"), card("b", "1")], at: t2)])
            try await store.record([listing([card("b", "1")], at: t2.addingTimeInterval(60))])
            try await store.record([listing([card("a", "2"), card("b", "1")], at: t2.addingTimeInterval(120))])
            #expect(try await store.firstSeen(of: ["shop:b", "shop:a", "shop:b"]) == ["shop:a": t1, "shop:b": t2])
            #expect(try await store.firstSeen(of: []) == [:])
            let many = (0..<1_200).map { card("\($0)", "1") }
            try await store.record([listing(many, at: t2, source: "shop")])
            #expect(try await store.firstSeen(of: many.map(\.id)).count == 1_200)
        }
    }

    /// A person's word on which cards are one item: each pair's latest decision, either way
    /// round, a pair named twice in one call once.
    @Test(arguments: Backend.all) func itemDecisionsKeepEachPairsLatestWord(_ backend: Backend) async throws {
        try await withState(backend) { state in
            try await state.items.decide([ItemPair("b:1", "a:1"), ItemPair("a:1", "c:1"), ItemPair("a:1", "b:1")], same: true, at: t1)
            try await state.items.decide([ItemPair("a:1", "b:1")], same: false, at: t2)
            #expect(try await state.items.itemDecisions() == [
                ItemDecision(pair: ItemPair("a:1", "b:1"), same: false, decidedAt: t2),
                ItemDecision(pair: ItemPair("a:1", "c:1"), same: true, decidedAt: t1),
            ])
        }
    }

    /// A decision moves the version of each named card's source, and of no other: every
    /// process keeping pages of them makes them again (the in-memory decisions keep no cards).
    @Test(arguments: Backend.all.filter { $0 != .memory }) func aDecisionMovesItsCardsSources(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            func one(_ source: String, _ id: String) -> LiveListing {
                listing([Card(source: source, upstreamID: id, kind: .item, title: "Item \(id)")], at: t1, source: source)
            }
            try await store.record([one("shop", "a"), one("mall", "b"), one("bazaar", "c")])
            let before = try await store.versions()
            try await state.items.decide([ItemPair("shop:a", "mall:b"), ItemPair("shop:a", "mall:b")], same: false, at: t2)
            let after = try await store.versions()
            #expect(after["shop"] == before["shop"].map { $0 + 1 } && after["mall"] == before["mall"].map { $0 + 1 }, "\(before) \(after)")
            #expect(after["bazaar"] == before["bazaar"])
            // A card the store does not keep moves nothing.
            try await state.items.decide([ItemPair("shop:x", "nowhere:y")], same: true, at: t2)
            #expect(try await store.versions() == after)
        }
    }

    /// Kept cards by their ids in one call: in the order asked, each once, unknown ids absent,
    /// more ids than one statement binds.
    @Test(arguments: Backend.all) func keptCardsAreReadByTheirIds(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            try await store.record([listing([card("a", "1"), card("b", "2")], at: t1)])
            let found = try await store.cards(ids: ["shop:b", "shop:x", "shop:a", "shop:b"])
            #expect(found.map(\.card) == [card("b", "2"), card("a", "1")])
            #expect(found.map(\.dates.firstSeen) == [t1, t1])
            #expect(try await store.cards(ids: []).isEmpty)
            let many = (0..<1_200).map { card("\($0)", "1") }
            try await store.record([listing(many, at: t2, source: "shop")])
            #expect(try await store.cards(ids: many.map(\.id).reversed()).map(\.card.id) == many.map(\.id).reversed())
        }
    }

    func card(_ id: String, _ price: String) -> Card {
        Card(source: "shop", upstreamID: id, kind: .item, title: "Item \(id)",
             price: Decimal(string: price).map { Price(amount: $0, currency: "EUR") })
    }
}
