import FeedConfig
import FeedCore
import FeedFormats
import FeedState
import Foundation
import Testing

/// Reading marks keep the same promises in memory, in SQLite and in PostgreSQL.
extension StoreContractTests {
    @Test(arguments: Backend.all) func marksAreKeptBesideTheCardsAndSurviveARefresh(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let a = card("a", "10"), b = card("b", "5"), c = card("c", "7")
            try await store.record([listing([a, b, c], at: at(0))])
            #expect(try await store.cards(of: nil).map(\.dates.readAt) == [nil, nil, nil])

            // Unknown ids are skipped; the kept ones are marked, in the order asked.
            #expect(try await store.mark(["shop:c", "shop:nope", "shop:a"], .read, at: at(1)) == ["shop:c", "shop:a"])
            #expect(try await store.mark(["shop:a"], .star, at: at(2)) == ["shop:a"])
            // Read again later: the first reading's time stays.
            #expect(try await store.mark(["shop:a"], .read, at: at(3)) == ["shop:a"])
            #expect(try await store.card(id: a.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(0), readAt: at(1), starredAt: at(2)))

            // A refresh that changes a card leaves its marks.
            try await store.record([listing([card("a", "9"), b, c], at: at(4))])
            #expect(try await store.card(id: a.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(4), readAt: at(1), starredAt: at(2)))

            #expect(try await store.mark(["shop:a", "shop:c"], .unread, at: at(5)) == ["shop:a", "shop:c"])
            #expect(try await store.mark(["shop:a"], .unstar, at: at(5)) == ["shop:a"])
            #expect(try await store.cards(of: ["shop"]).map(\.dates) == [
                KeptDates(firstSeen: at(0), lastSeen: at(4)), KeptDates(firstSeen: at(0), lastSeen: at(4)),
                KeptDates(firstSeen: at(0), lastSeen: at(4)),
            ])
            #expect(Set(try await store.ids(of: "shop")) == ["shop:a", "shop:b", "shop:c"])
            #expect(try await store.ids(of: "other").isEmpty)
        }
    }

    /// "Everything up to now": cards a refresh adds meanwhile stay unread.
    @Test(arguments: Backend.all) func markingReadUpToATimeLeavesLaterCardsUnread(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let a = card("a", "1"), b = card("b", "2")
            try await store.record([listing([a, b], at: at(0))])
            #expect(try await store.mark(["shop:b"], .read, at: at(1)) == ["shop:b"])
            let other = Card(source: "other", upstreamID: "x", kind: .item, title: "X")
            try await store.record([listing([other], at: at(1), source: "other")])
            // The page was shown at minute 2; a card arrives at minute 3.
            try await store.record([listing([a, b, card("late", "3")], at: at(3))])

            #expect(try await store.unreadCounts() == ["shop": 2, "other": 1])
            #expect(try await store.markRead(seenBy: at(2), sources: ["shop"], at: at(4)) == 1)
            #expect(try await store.unreadCounts() == ["shop": 1, "other": 1])
            #expect(try await store.card(id: "shop:a")?.dates.readAt == at(4))
            #expect(try await store.card(id: "shop:b")?.dates.readAt == at(1))
            #expect(try await store.card(id: "shop:late")?.dates.readAt == nil)
            #expect(try await store.card(id: "other:x")?.dates.readAt == nil)
            #expect(try await store.markRead(seenBy: at(3), sources: nil, at: at(5)) == 2)
            #expect(try await store.cards(of: nil).allSatisfy { $0.dates.readAt != nil })
            #expect(try await store.unreadCounts() == [:])
        }
    }

    /// A starred card is kept whatever its age and counts for none of its source's cards.
    @Test(arguments: Backend.all) func retentionKeepsStarredCards(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let cards = (0..<4).map { card("\($0)", "1") }
            try await store.record([listing(cards, at: at(0))])
            try await store.record([listing(Array(cards[2...]), at: at(10))])   // 0 and 1 gone at 10
            #expect(try await store.mark(["shop:0", "shop:3"], .star, at: at(11)) == ["shop:0", "shop:3"])
            // Gone for 15 minutes at minute 30 removes 1, not the starred 0; one card per
            // source: of 2 and 3, the starred 3 does not count, so 2 stays.
            let policy: @Sendable (String) -> KeepPolicy = { _ in KeepPolicy(goneFor: 15 * 60, maxCards: 1) }
            #expect(try await store.purge(policy, now: at(30), limit: 100) == 1)
            #expect(try await store.cards(of: ["shop"]).map(\.card.id).sorted() == ["shop:0", "shop:2", "shop:3"])
            // Unstarred, it goes with the next purge, marks and all.
            #expect(try await store.mark(["shop:0"], .unstar, at: at(31)) == ["shop:0"])
            #expect(try await store.mark(["shop:0"], .read, at: at(31)) == ["shop:0"])
            #expect(try await store.purge(policy, now: at(32), limit: 100) == 1)
            #expect(try await store.card(id: "shop:0") == nil)
        }
    }
}
