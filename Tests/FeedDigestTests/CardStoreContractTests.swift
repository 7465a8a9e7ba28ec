import FeedConfig
import FeedCore
import FeedFormats
import FeedState
import FeedSupport
import Foundation
import Testing

/// The card store keeps the same promises in memory, in SQLite and in PostgreSQL.
extension StoreContractTests {
    func listing(_ cards: [Card], complete: Bool = true, at: Date, source: String = "shop") -> LiveListing {
        LiveListing(source: source, cards: cards, complete: complete, at: at)
    }

    func at(_ minutes: Double) -> Date {
        t1.addingTimeInterval(minutes * 60)
    }

    @Test(arguments: Backend.all) func cardsAreSeenGoneAndBack(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            #expect(try await store.cards(of: nil).isEmpty)
            #expect(try await store.versions().isEmpty)
            let a = card("a", "10"), b = card("b", "5")
            try await store.record([listing([a, b], at: at(0))])
            #expect(try await store.cards(of: nil) == [
                KeptCard(card: a, dates: KeptDates(firstSeen: at(0), lastSeen: at(0)), position: 0),
                KeptCard(card: b, dates: KeptDates(firstSeen: at(0), lastSeen: at(0)), position: 1),
            ])
            #expect(try await store.versions() == ["shop": 1])

            // Seen again, unchanged: last seen moves, readers have nothing new.
            try await store.record([listing([a, b], at: at(1))])
            #expect(try await store.card(id: a.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(1)))
            #expect(try await store.versions() == ["shop": 1])

            // A partial listing (a first page, a filter, a budget) marks nothing gone.
            try await store.record([listing([b], complete: false, at: at(2))])
            #expect(try await store.card(id: a.id)?.dates.goneSince == nil)

            // The source answered and no longer lists a: gone since then, kept.
            try await store.record([listing([b], at: at(3))])
            #expect(try await store.card(id: a.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(1), goneSince: at(3)))
            #expect(try await store.versions() == ["shop": 2])
            #expect(try await store.cards(of: ["shop"]).map(\.card.id) == ["shop:b", "shop:a"])
            #expect(try await store.cards(of: ["other"]).isEmpty)

            // Back: no longer gone, first seen unchanged.
            try await store.record([listing([a, b], at: at(4))])
            #expect(try await store.card(id: a.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(4)))
            #expect(try await store.versions() == ["shop": 3])
            #expect(try await store.card(id: "shop:nope") == nil)
        }
    }

    @Test(arguments: Backend.all) func historyHasARowPerChangeOfATrackedValue(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            for (minute, price) in ["10", "8", "8", "12"].enumerated() {
                try await store.record([listing([card("p", price)], at: at(Double(minute)))])
            }
            var renamed = card("p", "12")
            renamed.title = "Item p, renamed"
            renamed.details["in_stock"] = false
            try await store.record([listing([renamed], at: at(4))])
            func price(_ amount: Int) -> JSONValue { ["amount": .number(Decimal(amount)), "currency": "EUR"] }
            #expect(try await store.history(of: "shop:p") == [
                CardChange(id: "shop:p", field: .price, at: at(1), before: price(10), after: price(8)),
                CardChange(id: "shop:p", field: .price, at: at(3), before: price(8), after: price(12)),
                CardChange(id: "shop:p", field: .title, at: at(4), before: "Item p", after: "Item p, renamed"),
                CardChange(id: "shop:p", field: .inStock, at: at(4), before: .null, after: false),
            ])
            #expect(try await store.history(of: "shop:other").isEmpty)
            let summary = try #require(try await store.summary().first)
            #expect([summary.source, "\(summary.cards)", "\(summary.gone)", "\(summary.historyRows)"] == ["shop", "1", "0", "4"])
            #expect(summary.bytes > 100 && summary.bytes < 2048, "\(summary.bytes) bytes")
        }
    }

    @Test(arguments: Backend.all) func retentionRemovesByAgeAndByCount(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let cards = (0..<6).map { card("\($0)", "1") }
            try await store.record([listing(cards, at: at(0))])
            try await store.record([listing(Array(cards[2...]), at: at(10))])   // 0 and 1 gone at 10
            try await store.record([listing(Array(cards[3...]), at: at(20))])   // 2 gone at 20
            try await store.record([listing([Card(source: "other", upstreamID: "x", kind: .item, title: "X")], at: at(20), source: "other")])
            let before = try await store.versions()["shop"] ?? 0
            // Gone for more than 15 minutes at minute 30: 0 and 1; at most 2 cards per source:
            // of the 4 left, the gone one (2) and then the least recently seen (3).
            let policy: @Sendable (String) -> KeepPolicy = { source in
                source == "shop" ? KeepPolicy(goneFor: 15 * 60, maxCards: 2) : .default
            }
            #expect(try await store.purge(policy, now: at(30), limit: 3) == 3)
            #expect(try await store.purge(policy, now: at(30), limit: 100) == 1)
            #expect(try await store.purge(policy, now: at(30), limit: 100) == 0)
            #expect(try await store.cards(of: ["shop"]).map(\.card.id).sorted() == ["shop:4", "shop:5"])
            #expect(try await store.cards(of: ["other"]).map(\.card.id) == ["other:x"])
            #expect(try await store.history(of: "shop:0").isEmpty)
            #expect(try await store.versions()["shop"] ?? 0 > before)
        }
    }
}
