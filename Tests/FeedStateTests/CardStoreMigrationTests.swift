import FeedCore
import FeedFormats
import FeedState
@testable import FeedStateSQLite
import Foundation
import GRDB
import Testing

/// A card store written by the version before pages came from indexes (`v1`) is migrated:
/// its cards get their rank, price key and date (an undated card's first-seen time) and
/// their numbers in the order first seen, their titles' keys and their same-item keys, its sources their counts,
/// and pages are made from them; the search index holds them.
@Suite struct CardStoreMigrationTests {
    @Test func aV1StoreGetsRanksAndSortKeys() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-cards-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let cheap = Card(source: "shop", upstreamID: "cheap", kind: .item, title: "Cheap", price: Price(amount: 5, currency: "EUR"),
                         url: URL(string: "https://shop.example/cheap?utm_source=feed"))
        // The same thing at another source, by its link.
        let copy = Card(source: "mirror", upstreamID: "copy", kind: .deal, title: "Budget one", url: URL(string: "https://shop.example/cheap"))
        let dear = Card(source: "shop", upstreamID: "dear", kind: .item, title: "Dear", price: Price(amount: Decimal(string: "10.5")!, currency: "EUR"))
        // Dated before the others were first seen (1000): they sort as of then, it after them.
        let old = Card(source: "shop", upstreamID: "old", kind: .post, title: "Old", published: Date(timeIntervalSince1970: 500))
        let queue = try DatabaseQueue(path: directory.appendingPathComponent("cards.sqlite").path)
        try SQLiteCardStore.schema.migrator.migrate(queue, upTo: "v1: card store")
        try await queue.write { db in
            // The dear card inserted first, listed second.
            for (card, position) in [(dear, 1), (cheap, 0), (old, 2), (copy, 0)] {
                let json = StoredCardForm.json(card)
                try db.execute(sql: """
                    INSERT INTO card (user_id, id, source, position, card, fingerprint, tracked, first_seen, last_seen, gone_since)
                    VALUES (0, ?, ?, ?, ?, ?, ?, 1000, 1000, NULL)
                    """, arguments: [card.id, card.source, position, Data(json), StoredCardForm.fingerprint(json),
                                     StoredCardForm.trackedText(ListingMerge.tracked(card))])
            }
            try db.execute(sql: "INSERT INTO card_source_version (source, version) VALUES ('shop', 1)")
        }
        try queue.close()

        let state = try await EngineState.open(.directory(directory), connections: .one)
        let store = state.cards
        let feed = try await store.page(StoredPageQuery(sources: ["shop"], order: .feed, descending: false, offset: 0, limit: 10))
        #expect(feed.cards.map(\.card.id) == [cheap.id, dear.id, old.id])
        #expect(feed.total == 3)
        let byPrice = try await store.page(StoredPageQuery(sources: ["shop"], order: .price, descending: true, offset: 0, limit: 10))
        #expect(byPrice.cards.map(\.card) == [dear, cheap, old])
        let newest = try await store.page(StoredPageQuery(sources: ["shop"], order: .published, descending: true, offset: 0, limit: 10))
        #expect(newest.cards.map(\.card) == [cheap, dear, old])
        // Their titles keyed (v15): Cheap, Dear, Old.
        let byTitle = try await store.page(StoredPageQuery(sources: ["shop"], order: .title, descending: true, offset: 0, limit: 2))
        #expect(byTitle.cards.map(\.card) == [old, dear])
        #expect(try await store.versions() == ["shop": 1])
        // The search index is built from the cards kept.
        #expect(try await state.search.search(try CardSearch(parsing: "cheap"), offset: 0, limit: 10).cards.map(\.card) == [cheap])
        #expect(try await state.search.search(try CardSearch(parsing: "dear"), offset: 0, limit: 10).cards.map(\.card) == [dear])
        #expect(try await state.search.search(try CardSearch(parsing: "kind:item"), offset: 0, limit: 10).total == 2)
        #expect(try await state.search.search(try CardSearch(parsing: "kind:post"), offset: 0, limit: 10).cards.map(\.card) == [old])
        // Their same-item keys (v16): each finds the other.
        #expect(try await state.search.cards(sharingItemKeysWith: [cheap.id]).map(\.card) == [copy])
        #expect(try await state.search.cards(sharingItemKeysWith: [copy.id]).map(\.card) == [cheap])
        // Numbered in the order first seen (feed order within one time); a new card next.
        #expect(feed.cards.map(\.dates.number) == [2, 3, 4])
        let new = Card(source: "shop", upstreamID: "new", kind: .item, title: "New")
        try await store.record([LiveListing(source: "shop", cards: [cheap, dear, old, new], complete: true, at: Date(timeIntervalSince1970: 2000))])
        #expect(try await store.cards(of: ["shop"]).map(\.dates.number) == [2, 3, 4, 5])
    }
}
