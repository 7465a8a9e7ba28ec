import FeedConfig
import FeedCore
import FeedFormats
import FeedState
import Foundation
import Testing

/// Reading marks keep the same promises in memory, in SQLite and in PostgreSQL.
extension StoreContractTests {
    /// An id given twice in one request (apps' overlapping batches, `aggregate mark read X X`)
    /// is marked once, on every backend, for every mark.
    @Test(arguments: Backend.all) func aRepeatedIdIsMarkedOnce(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let marks = state.marks
            try await store.record([listing([card("a", "10"), card("b", "5")], at: at(0))])
            for mark in [ReadingMark.read, .star, .unread, .unstar] {
                let marked = try await marks.mark(["shop:a", "shop:a", "shop:nope", "shop:b", "shop:a"], mark, at: at(1))
                #expect(marked == ["shop:a", "shop:a", "shop:b", "shop:a"], "\(mark)")
            }
            #expect(try await marks.mark(["shop:b", "shop:b"], .read, at: at(2)) == ["shop:b", "shop:b"])
            let dates = try await store.card(id: "shop:b")?.dates
            #expect(dates?.readAt == at(2))
            #expect(try await marks.unreadCounts() == ["shop": 1])
        }
    }

    /// Unread counts follow every way a mark or a card comes and goes — marked, unmarked,
    /// starred only, marked up to a time, the card purged, new cards — per person, as
    /// counting the cards would give them.
    @Test(arguments: Backend.all) func unreadCountsFollowMarksCardsAndPurges(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let marks = state.marks
            let ann = store.reading(as: 1)
            let annMarks = state.marks.marks(of: 1)
            func counted(_ store: any CardStore) async throws -> [String: Int] {
                var counts: [String: Int] = [:]
                for card in try await store.cards(of: nil) where card.dates.readAt == nil { counts[card.card.source, default: 0] += 1 }
                return counts
            }
            let cards = (0..<5).map { card("\($0)", "1") }
            let others = (0..<3).map { Card(source: "other", upstreamID: "\($0)", kind: .item, title: "Other \($0)") }
            try await store.record([listing(cards, at: at(0)), listing(others, at: at(0), source: "other")])
            #expect(try await marks.unreadCounts() == ["shop": 5, "other": 3])
            _ = try await marks.mark(["shop:0", "shop:1", "other:2", "shop:1"], .read, at: at(1))
            _ = try await annMarks.mark(["shop:4"], .read, at: at(1))
            _ = try await marks.mark(["shop:3"], .star, at: at(1))
            _ = try await marks.mark(["shop:1"], .unread, at: at(2))
            #expect(try await marks.unreadCounts() == ["shop": 4, "other": 2])
            #expect(try await annMarks.unreadCounts() == ["shop": 4, "other": 3])
            // shop:0 (read) and shop:2 go, and are purged; a new card comes.
            try await store.record([listing([cards[1], cards[3], cards[4], card("5", "1")], at: at(3))])
            #expect(try await store.purge({ _ in KeepPolicy(goneFor: 60, maxCards: 100) }, now: at(10), limit: 10) == 2)
            #expect(try await marks.unreadCounts() == ["shop": 4, "other": 2])
            #expect(try await marks.unreadCounts() == (try await counted(store)))
            #expect(try await annMarks.unreadCounts() == (try await counted(ann)))
            #expect(try await annMarks.markRead(seenBy: at(5), sources: ["other"], at: at(6)) == 3)
            #expect(try await annMarks.unreadCounts() == ["shop": 3])
            #expect(try await annMarks.unreadCounts() == (try await counted(ann)))
        }
    }

    @Test(arguments: Backend.all) func marksAreKeptBesideTheCardsAndSurviveARefresh(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let marks = state.marks
            let a = card("a", "10"), b = card("b", "5"), c = card("c", "7")
            try await store.record([listing([a, b, c], at: at(0))])
            #expect(try await store.cards(of: nil).map(\.dates.readAt) == [nil, nil, nil])

            // Unknown ids are skipped; the kept ones are marked, in the order asked.
            #expect(try await marks.mark(["shop:c", "shop:nope", "shop:a"], .read, at: at(1)) == ["shop:c", "shop:a"])
            #expect(try await marks.mark(["shop:a"], .star, at: at(2)) == ["shop:a"])
            // Read again later: the first reading's time stays.
            #expect(try await marks.mark(["shop:a"], .read, at: at(3)) == ["shop:a"])
            #expect(try await marks.unreadCounts() == ["shop": 1])
            #expect(try await store.card(id: a.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(0), readAt: at(1), starredAt: at(2), number: 1))

            // A refresh that changes a card leaves its marks.
            try await store.record([listing([card("a", "9"), b, c], at: at(4))])
            #expect(try await store.card(id: a.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(4), readAt: at(1), starredAt: at(2), number: 1))

            #expect(try await marks.mark(["shop:a", "shop:c"], .unread, at: at(5)) == ["shop:a", "shop:c"])
            #expect(try await marks.mark(["shop:a"], .unstar, at: at(5)) == ["shop:a"])
            #expect(try await marks.unreadCounts() == ["shop": 3])
            #expect(try await store.cards(of: ["shop"]).map(\.dates) == [
                KeptDates(firstSeen: at(0), lastSeen: at(4), number: 1), KeptDates(firstSeen: at(0), lastSeen: at(4), number: 2),
                KeptDates(firstSeen: at(0), lastSeen: at(4), number: 3),
            ])
            #expect(Set(try await store.ids(of: "shop")) == ["shop:a", "shop:b", "shop:c"])
            #expect(try await store.ids(of: "other").isEmpty)
        }
    }

    /// Cards are everyone's, marks each person's: two people reading the same cards see
    /// their own marks, counts, views and searches; retention keeps what either starred,
    /// and a card removed takes every person's marks (and read counts) with it.
    @Test(arguments: Backend.all) func eachPersonHasTheirOwnMarks(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let ann = state.cards.reading(as: 1), bob = state.cards.reading(as: 2)
            let bobMarks = state.marks.marks(of: 2), bobSearch = state.search.searching(as: 2)
            let annMarks = state.marks.marks(of: 1)
            let cards = (0..<4).map { card("\($0)", "1") }
            try await ann.record([listing(cards, at: at(0))])
            #expect(try await annMarks.mark(["shop:0", "shop:1"], .read, at: at(1)) == ["shop:0", "shop:1"])
            #expect(try await bobMarks.mark(["shop:3"], .star, at: at(2)) == ["shop:3"])
            #expect(try await bobMarks.markRead(seenBy: at(0), sources: nil, at: at(3)) == 4)
            #expect(try await bobMarks.mark(["shop:2"], .unread, at: at(4)) == ["shop:2"])

            #expect(try await annMarks.unreadCounts() == ["shop": 2])
            #expect(try await bobMarks.unreadCounts() == ["shop": 1])
            #expect(try await state.marks.unreadCounts() == ["shop": 4])
            #expect(try await ann.card(id: "shop:3")?.dates == KeptDates(firstSeen: at(0), lastSeen: at(0), number: 4))
            #expect(try await bob.card(id: "shop:3")?.dates == KeptDates(firstSeen: at(0), lastSeen: at(0), readAt: at(3), starredAt: at(2), number: 4))
            #expect(try await ann.cards(of: nil).map(\.dates.readAt) == [at(1), at(1), nil, nil])
            func page(_ store: any CardStore, _ reading: ReadingFilter) async throws -> [String] {
                let query = StoredPageQuery(sources: ["shop"], order: .feed, descending: false, offset: 0, limit: 10, reading: reading)
                return try await store.page(query).cards.map(\.card.id)
            }
            #expect(try await page(ann, .unread) == ["shop:2", "shop:3"])
            #expect(try await page(bob, .unread) == ["shop:2"])
            #expect(try await page(ann, .starred) == [])
            #expect(try await page(bob, .starred) == ["shop:3"])
            #expect(try await bobSearch.search(try CardSearch(parsing: "item"), offset: 0, limit: 10).cards.map(\.dates.starredAt).compactMap { $0 } == [at(2)])

            // Everything gone: retention keeps Bob's star; removing the rest takes Ann's marks.
            try await ann.record([listing([], at: at(10))])
            let policy: @Sendable (String) -> KeepPolicy = { _ in KeepPolicy(goneFor: 60, maxCards: 10) }
            #expect(try await ann.purge(policy, now: at(30), limit: 100) == 3)
            #expect(try await ann.cards(of: nil).map(\.card.id) == ["shop:3"])
            #expect(try await annMarks.unreadCounts() == ["shop": 1])
            #expect(try await bobMarks.unreadCounts() == [:])
        }
    }

    /// A card's number (the Google Reader API's item id) finds it on every store.
    /// A person's marks' counter moves with each change of their marks, whoever writes
    /// it, and with nothing else: serve keeps their pages while it stands.
    @Test(arguments: Backend.all) func marksMoveTheirPersonsCounterOnly(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let ann = state.cards.reading(as: 1)
            let bobMarks = state.marks.marks(of: 2)
            let annMarks = state.marks.marks(of: 1)
            try await ann.record([listing([card("a", "1"), card("b", "2")], at: at(0))])
            #expect(try await annMarks.marksVersion() == 0)
            #expect(try await annMarks.mark(["shop:a"], .read, at: at(1)) == ["shop:a"])
            #expect(try await annMarks.marksVersion() == 1)
            // Nothing kept is marked: nothing moves; a refresh moves nothing either.
            #expect(try await annMarks.mark(["shop:nope"], .star, at: at(2)) == [])
            try await ann.record([listing([card("a", "3"), card("b", "2")], at: at(3))])
            #expect(try await annMarks.marksVersion() == 1)
            #expect(try await annMarks.markRead(seenBy: at(5), sources: nil, at: at(5)) == 1)
            #expect(try await annMarks.marksVersion() == 2)
            #expect(try await annMarks.markRead(seenBy: at(5), sources: nil, at: at(6)) == 0)
            #expect(try await annMarks.marksVersion() == 2)
            // Another person's marks are theirs: Ann's counter stays.
            #expect(try await bobMarks.mark(["shop:b"], .star, at: at(7)) == ["shop:b"])
            #expect(try await bobMarks.marksVersion() == 1)
            #expect(try await annMarks.marksVersion() == 2)
            #expect(try await annMarks.mark(["shop:a"], .unread, at: at(8)) == ["shop:a"])
            #expect(try await annMarks.marksVersion() == 3)
        }
    }

    /// Cards are numbered 1, 2, 3… in the order the store first saw them: a card seen again
    /// or changed keeps its number, a purged card's number is never given again, numbers
    /// find their cards, and the number index pages them (past a number, below one, among
    /// some) with each person's marks, as Fever's apps read them.
    @Test(arguments: Backend.all) func cardsAreNumberedInTheOrderFirstSeen(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            func numbers() async throws -> [String: Int64] {
                Dictionary(uniqueKeysWithValues: try await store.cards(of: nil).map { ($0.card.id, $0.dates.number) })
            }
            func other(_ id: String) -> Card { Card(source: "other", upstreamID: id, kind: .item, title: id) }
            let cards = (0..<3).map { card("\($0)", "1") }
            try await store.record([listing(cards, at: at(0))])
            #expect(try await numbers() == ["shop:0": 1, "shop:1": 2, "shop:2": 3])
            try await store.record([listing([card("0", "2"), cards[1], card("3", "1")], at: at(1)), listing([other("x")], at: at(1), source: "other")])
            #expect(try await numbers() == ["shop:0": 1, "shop:1": 2, "shop:2": 3, "shop:3": 4, "other:x": 5])
            #expect(try await store.card(id: "shop:0")?.card.price?.amount == 2)
            // The highest number purged is not given again.
            try await store.record([listing([], at: at(2), source: "other")])
            #expect(try await store.purge({ _ in KeepPolicy(goneFor: 60, maxCards: 100) }, now: at(10), limit: 10) == 2)
            try await store.record([listing([other("y")], at: at(11), source: "other")])
            #expect(try await numbers() == ["shop:0": 1, "shop:1": 2, "shop:3": 4, "other:y": 6])
            #expect(try await store.ids(ofNumbers: [1, 4, 5, 6, 42]) == [1: "shop:0", 4: "shop:3", 6: "other:y"])
            #expect(try await store.ids(ofNumbers: []).isEmpty)

            // Pages by number, of the sources asked, with the person's marks.
            let ann = store.reading(as: 1)
            _ = try await state.marks.marks(of: 1).mark(["shop:1"], .star, at: at(12))
            _ = try await state.marks.marks(of: 1).mark(["shop:0", "other:y"], .read, at: at(12))
            func page(_ span: CardNumbers, _ sources: [String] = ["shop", "other"], limit: Int = 50) async throws -> [String] {
                try await ann.cards(numbered: span, of: sources, limit: limit).map { "\($0.dates.number) \($0.card.id)\($0.dates.starredAt == nil ? "" : " starred")" }
            }
            #expect(try await page(.after(0)) == ["1 shop:0", "2 shop:1 starred", "4 shop:3", "6 other:y"])
            #expect(try await page(.after(2), limit: 1) == ["4 shop:3"])
            #expect(try await page(.after(0), ["other"]) == ["6 other:y"])
            #expect(try await page(.before(.max), limit: 3) == ["6 other:y", "4 shop:3", "2 shop:1 starred"])
            #expect(try await page(.before(4)) == ["2 shop:1 starred", "1 shop:0"])
            #expect(try await page(.among([6, 3, 1, 99])) == ["1 shop:0", "6 other:y"])
            #expect(try await page(.after(0), []) == [])
            #expect(try await state.marks.marks(of: 1).numbers(.unread, of: ["shop", "other"]) == [2, 4])
            #expect(try await state.marks.marks(of: 1).numbers(.read, of: ["shop"]) == [1])
            #expect(try await state.marks.marks(of: 1).numbers(.starred, of: ["shop", "other"]) == [2])
            #expect(try await state.marks.numbers(.unread, of: ["shop", "other"]) == [1, 2, 4, 6])
            #expect(try await state.marks.numbers(.starred, of: ["shop"]) == [])
        }
    }

    /// "Everything up to now": cards a refresh adds meanwhile stay unread.
    @Test(arguments: Backend.all) func markingReadUpToATimeLeavesLaterCardsUnread(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let marks = state.marks
            let a = card("a", "1"), b = card("b", "2")
            try await store.record([listing([a, b], at: at(0))])
            #expect(try await marks.mark(["shop:b"], .read, at: at(1)) == ["shop:b"])
            let other = Card(source: "other", upstreamID: "x", kind: .item, title: "X")
            try await store.record([listing([other], at: at(1), source: "other")])
            // The page was shown at minute 2; a card arrives at minute 3.
            try await store.record([listing([a, b, card("late", "3")], at: at(3))])

            #expect(try await marks.unreadCounts() == ["shop": 2, "other": 1])
            #expect(try await marks.markRead(seenBy: at(2), sources: ["shop"], at: at(4)) == 1)
            #expect(try await marks.unreadCounts() == ["shop": 1, "other": 1])
            #expect(try await store.card(id: "shop:a")?.dates.readAt == at(4))
            #expect(try await store.card(id: "shop:b")?.dates.readAt == at(1))
            #expect(try await store.card(id: "shop:late")?.dates.readAt == nil)
            #expect(try await store.card(id: "other:x")?.dates.readAt == nil)
            #expect(try await marks.markRead(seenBy: at(3), sources: nil, at: at(5)) == 2)
            #expect(try await store.cards(of: nil).allSatisfy { $0.dates.readAt != nil })
            #expect(try await marks.unreadCounts() == [:])
        }
    }

    /// A starred card is kept whatever its age and counts for none of its source's cards.
    @Test(arguments: Backend.all) func retentionKeepsStarredCards(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let marks = state.marks
            let cards = (0..<4).map { card("\($0)", "1") }
            try await store.record([listing(cards, at: at(0))])
            try await store.record([listing(Array(cards[2...]), at: at(10))])   // 0 and 1 gone at 10
            #expect(try await marks.mark(["shop:0", "shop:3"], .star, at: at(11)) == ["shop:0", "shop:3"])
            // Gone for 15 minutes at minute 30 removes 1, not the starred 0; one card per
            // source: of 2 and 3, the starred 3 does not count, so 2 stays.
            let policy: @Sendable (String) -> KeepPolicy = { _ in KeepPolicy(goneFor: 15 * 60, maxCards: 1) }
            #expect(try await marks.mark(["shop:1", "shop:2"], .read, at: at(12)) == ["shop:1", "shop:2"])
            #expect(try await marks.unreadCounts() == ["shop": 2])
            #expect(try await store.purge(policy, now: at(30), limit: 100) == 1)
            #expect(try await store.cards(of: ["shop"]).map(\.card.id).sorted() == ["shop:0", "shop:2", "shop:3"])
            // The read card removed took its mark with it: the counts say the same.
            #expect(try await marks.unreadCounts() == ["shop": 2])
            // Unstarred, it goes with the next purge, marks and all.
            #expect(try await marks.mark(["shop:0"], .unstar, at: at(31)) == ["shop:0"])
            #expect(try await marks.mark(["shop:0"], .read, at: at(31)) == ["shop:0"])
            #expect(try await store.purge(policy, now: at(32), limit: 100) == 1)
            #expect(try await store.card(id: "shop:0") == nil)
            #expect(try await marks.unreadCounts() == ["shop": 1])
            // Back upstream, it is a new card: unread.
            try await store.record([listing([cards[0], cards[2], cards[3]], at: at(33))])
            #expect(try await store.card(id: "shop:0")?.dates.readAt == nil)
            #expect(try await marks.unreadCounts() == ["shop": 2])
        }
    }

    /// The reader's first view, Unread newest first, in every slice: the same cards as
    /// ordering every unread card, however the store finds them (SQLite walks its date
    /// index; a tie or a card without a date takes the long way).
    @Test(arguments: Backend.all) func theNewestUnreadCardsInEverySlice(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let marks = state.marks
            func item(_ source: String, _ n: Int, hours: Double?) -> Card {
                Card(source: source, upstreamID: "\(n)", kind: .post, title: "\(source) \(n)",
                     published: hours.map { at(0).addingTimeInterval($0 * 3600) })
            }
            let a = (0..<12).map { item("a", $0, hours: Double($0 * 2)) }
            let b = (0..<12).map { item("b", $0, hours: $0 == 11 ? nil : Double($0 * 2 + 1)) }
            try await store.record([listing(a, at: at(0), source: "a"), listing(b, at: at(0), source: "b")])
            _ = try await marks.mark(["a:11", "b:10", "a:7", "b:3", "a:0"], .read, at: at(1))
            let unread = (a + b).filter { !["a:11", "b:10", "a:7", "b:3", "a:0"].contains($0.id) }
            let newestFirst = unread.sorted { x, y in
                switch (x.published, y.published) {
                case let (p?, q?): p > q
                case (_?, nil): true
                default: false
                }
            }.map(\.id)
            for (offset, limit) in [(0, 5), (5, 5), (0, 18), (0, 19), (15, 5), (2, 1)] {
                let query = StoredPageQuery(sources: ["a", "b"], order: .published, descending: true, offset: offset, limit: limit, reading: .unread)
                let page = try await store.page(query)
                #expect(page.cards.map(\.card.id) == Array(newestFirst.dropFirst(offset).prefix(limit)), "\(offset), \(limit)")
                #expect(page.total == 19)
            }
            let one = StoredPageQuery(sources: ["b"], order: .published, descending: true, offset: 0, limit: 2, reading: .unread)
            let page = try await store.page(one)
            #expect(page.cards.map(\.card.id) == ["b:9", "b:8"])
            #expect(page.total == 10)
        }
    }

    /// The reader's front page: deals and products without a date sort by when they were
    /// first seen, among the posts of that time, not after every dated card; cards recorded
    /// together (one date) keep the feed order, a round of one card per source at a time,
    /// also where a page ends inside a round.
    @Test(arguments: Backend.all) func undatedCardsSortByWhenTheyWereFirstSeen(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            func post(_ n: Int, minutes: Double) -> Card {
                Card(source: "posts", upstreamID: "\(n)", kind: .post, title: "post \(n)", published: at(minutes))
            }
            func deal(_ source: String, _ n: Int) -> Card {
                Card(source: source, upstreamID: "\(n)", kind: .deal, title: "\(source) \(n)",
                     price: Price(amount: Decimal(10 + n), currency: "USD"))
            }
            try await store.record([listing([post(0, minutes: 9), post(1, minutes: 1)], at: at(5), source: "posts"),
                                    listing((0..<6).map { deal("deals", $0) }, at: at(5), source: "deals"),
                                    listing((0..<5).map { deal("shop", $0) }, at: at(5), source: "shop")])
            _ = try await state.marks.mark(["deals:1"], .read, at: at(6))
            let newestFirst = ["posts:0", "deals:0", "shop:0", "shop:1", "deals:2", "shop:2", "deals:3", "shop:3",
                               "deals:4", "shop:4", "deals:5", "posts:1"]
            for (offset, limit) in [(0, 4), (4, 4), (8, 4), (0, 3), (3, 2), (0, 12), (11, 5)] {
                let query = StoredPageQuery(sources: ["posts", "deals", "shop"], order: .published, descending: true,
                                            offset: offset, limit: limit, reading: .unread)
                let page = try await store.page(query)
                #expect(page.cards.map(\.card.id) == Array(newestFirst.dropFirst(offset).prefix(limit)), "\(offset), \(limit)")
                #expect(page.total == 12)
            }
            // Every card, oldest first: the undated ones by first seen, the feed order within.
            let oldest = try await store.page(StoredPageQuery(sources: ["posts", "deals", "shop"], order: .published, descending: false,
                                                               offset: 0, limit: 4))
            #expect(oldest.cards.map(\.card.id) == ["posts:1", "deals:0", "shop:0", "deals:1"])
        }
    }
}
