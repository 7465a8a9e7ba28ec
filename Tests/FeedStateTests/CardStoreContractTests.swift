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
                KeptCard(card: a, dates: KeptDates(firstSeen: at(0), lastSeen: at(0), number: 1), position: 0),
                KeptCard(card: b, dates: KeptDates(firstSeen: at(0), lastSeen: at(0), number: 2), position: 1),
            ])
            #expect(try await store.versions() == ["shop": 1])

            // Seen again, unchanged: last seen moves, readers have nothing new.
            try await store.record([listing([a, b], at: at(1))])
            #expect(try await store.card(id: a.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(1), number: 1))
            #expect(try await store.versions() == ["shop": 1])

            // A partial listing (a first page, a filter, a budget) marks nothing gone.
            try await store.record([listing([b], complete: false, at: at(2))])
            #expect(try await store.card(id: a.id)?.dates.goneSince == nil)

            // The source answered and no longer lists a: gone since then, kept.
            try await store.record([listing([b], at: at(3))])
            #expect(try await store.card(id: a.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(1), goneSince: at(3), number: 1))
            #expect(try await store.versions() == ["shop": 2])
            #expect(try await store.cards(of: ["shop"]).map(\.card.id) == ["shop:b", "shop:a"])
            #expect(try await store.cards(of: ["other"]).isEmpty)

            // Back: no longer gone, first seen unchanged.
            try await store.record([listing([a, b], at: at(4))])
            #expect(try await store.card(id: a.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(4), number: 1))
            #expect(try await store.versions() == ["shop": 3])
            #expect(try await store.card(id: "shop:nope") == nil)
        }
    }

    @Test(arguments: Backend.all) func anUnchangedListingMovesLastSeenOfWhatTheStoredOneListed(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let a = card("a", "10"), b = card("b", "5")
            var first = listing([a, b], at: at(0))
            first.tag = "t1"
            try await store.record([first])
            #expect(try await store.listingTags() == ["shop": "t1"])
            #expect(try await store.listingTag(of: "shop") == "t1")
            #expect(try await store.listingTag(of: "nowhere") == nil)

            // The upstream confirmed that listing: its cards are seen again, nothing else moves.
            try await store.record([.unchanged(source: "shop", tag: "t1", at: at(1))])
            #expect(try await store.cards(of: nil).map(\.dates) == [KeptDates(firstSeen: at(0), lastSeen: at(1), number: 1),
                                                                    KeptDates(firstSeen: at(0), lastSeen: at(1), number: 2)])
            #expect(try await store.versions() == ["shop": 1])

            // Not the listing the store has (another tag): nothing moves.
            try await store.record([.unchanged(source: "shop", tag: "t0", at: at(2))])
            #expect(try await store.card(id: a.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(1), number: 1))

            // b is gone from the next listing: it was last seen when that one was confirmed.
            var second = listing([a], at: at(3))
            second.tag = "t2"
            try await store.record([second])
            try await store.record([.unchanged(source: "shop", tag: "t2", at: at(4))])
            #expect(try await store.card(id: a.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(4), number: 1))
            #expect(try await store.card(id: b.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(1), goneSince: at(3), number: 2))
            #expect(try await store.versions() == ["shop": 2])

            // A partial listing says nothing of the rest: the tag is forgotten.
            var partial = listing([a], complete: false, at: at(5))
            partial.tag = "t3"
            try await store.record([partial])
            #expect(try await store.listingTags().isEmpty)
            #expect(try await store.listingTag(of: "shop") == nil)
            try await store.record([.unchanged(source: "shop", tag: "t2", at: at(6))])
            #expect(try await store.card(id: a.id)?.dates == KeptDates(firstSeen: at(0), lastSeen: at(5), number: 1))

            // A purge that removes a card of the source forgets it too.
            try await store.record([second])
            #expect(try await store.listingTags() == ["shop": "t2"])
            #expect(try await store.purge({ _ in KeepPolicy(goneFor: 60, maxCards: 10) }, now: at(10), limit: 10) == 1)
            #expect(try await store.listingTags().isEmpty)
        }
    }

    /// A complete listing read again from the same bytes carries the tag the store kept of
    /// the last one (a cold cache, an upstream without validators): it is that listing, seen
    /// again, and its cards are not read — here they differ, and nothing of them is taken.
    /// Another tag is merged as ever.
    @Test(arguments: Backend.all) func aCompleteListingWithTheStoredTagIsSeenNotRead(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            var first = listing([card("a", "10"), card("b", "5")], at: at(0))
            first.tag = "t1"
            try await store.record([first])
            var again = listing([card("a", "99")], at: at(1))
            again.tag = "t1"
            try await store.record([again])
            #expect(try await store.cards(of: nil).map(\.card.price?.amount) == [10, 5])
            #expect(try await store.cards(of: nil).map(\.dates) == [KeptDates(firstSeen: at(0), lastSeen: at(1), number: 1),
                                                                    KeptDates(firstSeen: at(0), lastSeen: at(1), number: 2)])
            #expect(try await store.versions() == ["shop": 1])
            #expect(try await store.history(of: "shop:a").isEmpty)
            // The same listing partial (a first page): merged, as a partial listing always is.
            var partial = listing([card("a", "10")], complete: false, at: at(2))
            partial.tag = "t1"
            try await store.record([partial])
            #expect(try await store.listingTags().isEmpty)
            var other = listing([card("a", "99")], at: at(3))
            other.tag = "t2"
            try await store.record([other])
            #expect(try await store.card(id: "shop:a")?.card.price?.amount == 99)
            #expect(try await store.card(id: "shop:b")?.dates.goneSince == at(3))
            #expect(try await store.listingTags() == ["shop": "t2"])
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

    /// A purge keeps the order pages are cut from: a card removed from between others
    /// leaves the rest in order, each page (one card of each source at a time) the slice
    /// of every kept card's order.
    @Test(arguments: Backend.all) func aPurgeFromTheMiddleKeepsPagesInOrder(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let cards = (0..<6).map { card("\($0)", "1") }
            let others = (0..<6).map { Card(source: "other", upstreamID: "\($0)", kind: .item, title: "Other \($0)") }
            try await store.record([listing(cards, at: at(0)), listing(others, at: at(0), source: "other")])
            try await store.record([listing([cards[0], cards[1], cards[3], cards[4], cards[5]], at: at(10))])  // 2 gone at 10
            try await store.record([listing([cards[0], cards[1], cards[4], cards[5]], at: at(20))])            // 3 gone at 20
            // Gone for 15 minutes at minute 27: 2, listed before 3 among the gone ones.
            #expect(try await store.purge({ _ in KeepPolicy(goneFor: 15 * 60, maxCards: 10) }, now: at(27), limit: 10) == 1)
            #expect(try await store.cards(of: ["shop"]).map(\.card.id) == ["shop:0", "shop:1", "shop:4", "shop:5", "shop:3"])
            let order = ["shop:0", "other:0", "shop:1", "other:1", "shop:4", "other:2", "shop:5", "other:3", "shop:3", "other:4", "other:5"]
            for offset in 0..<order.count {
                let query = StoredPageQuery(sources: ["shop", "other"], order: .feed, descending: false, offset: offset, limit: 3)
                let page = try await store.page(query)
                #expect(page.cards.map(\.card.id) == Array(order.dropFirst(offset).prefix(3)), "offset \(offset)")
            }
            #expect(try await store.summary().map(\.cards) == [6, 5])
        }
    }

    /// A page the store makes from its indexes is the page ordering every kept card gives:
    /// feed order (each source's cards as ``CardStore/cards(of:)`` lists them, one of each
    /// source at a time in the query's order), or by price (cards lacking one last) or date
    /// (an undated card by when it was first seen), the unfiltered feed order breaking ties;
    /// over gone cards, ties, missing keys and any slice.
    @Test(arguments: Backend.all) func aPageFromTheIndexesIsThePageOfEveryCardOrdered(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let marks = state.marks
            func item(_ source: String, _ id: String, _ price: String?, day: Double?) -> Card {
                // Titles that tie once case and accents are folded, which feed order then breaks.
                let titles = ["Zebra", "apple", "Éclair", "Apple", "eclair", "banana"]
                let title = titles[((Int(id) ?? 0) + Int(source.unicodeScalars.first?.value ?? 0)) % titles.count]
                return Card(source: source, upstreamID: id, kind: .item, title: title,
                     price: price.flatMap { Decimal(string: $0) }.map { Price(amount: $0, currency: "EUR") },
                     published: day.map { t1.addingTimeInterval($0 * 86_400) })
            }
            let a = [item("a", "1", "5", day: 3), item("a", "2", nil, day: nil), item("a", "3", "2.5", day: 1), item("a", "4", "5", day: 3),
                     item("a", "5", "0.99", day: 7)]
            let b = [item("b", "1", "5", day: nil), item("b", "2", "12", day: 2), item("b", "3", nil, day: 3)]
            let c = [item("c", "1", "2.5", day: 1), item("c", "2", "7", day: nil), item("c", "3", "5", day: 5), item("c", "4", nil, day: 2)]
            try await store.record([listing(a, at: at(0), source: "a"), listing(b, at: at(0), source: "b"), listing(c, at: at(0), source: "c")])
            // a:2 and c:1 gone (they go after the listed cards); b reordered.
            try await store.record([listing([a[0], a[2], a[3], a[4]], at: at(1), source: "a"), listing([b[2], b[0], b[1]], at: at(1), source: "b"),
                                    listing([c[1], c[2], c[3]], at: at(1), source: "c")])

            func expected(_ query: StoredPageQuery) async throws -> [String] {
                var lists: [[KeptCard]] = []
                // Each card's place in the unfiltered feed order: its rank in its source, then
                // its source's place in the query.
                var feedPlace: [String: (rank: Int, place: Int)] = [:]
                for (place, source) in query.sources.enumerated() {
                    let all = try await store.cards(of: [source])
                    for (rank, kept) in all.enumerated() { feedPlace[kept.card.id] = (rank, place) }
                    lists.append(all.filter { query.reading?.includes($0.dates) ?? true })
                }
                var merged: [KeptCard] = []
                for round in 0..<(lists.map(\.count).max() ?? 0) {
                    for list in lists where round < list.count { merged.append(list[round]) }
                }
                func key(_ kept: KeptCard) -> Decimal? {
                    switch query.order {
                    case .feed, .source, .title: nil
                    case .price: kept.card.price?.amount
                    // Undated cards by when they were first seen.
                    case .published: Decimal((kept.card.published ?? kept.dates.firstSeen).timeIntervalSince1970)
                    }
                }
                let ordered: [KeptCard]
                if query.order == .title {
                    ordered = merged.indices.sorted { i, j in
                        let (x, y) = (CardSortKeys.titleKey(merged[i].card.title), CardSortKeys.titleKey(merged[j].card.title))
                        if x != y { return query.descending ? x > y : x < y }
                        return feedPlace[merged[i].card.id, default: (0, 0)] < feedPlace[merged[j].card.id, default: (0, 0)]
                    }.map { merged[$0] }
                } else if query.order == .source {
                    // Each source's filtered list whole, the sources by id.
                    ordered = zip(query.sources, lists).sorted { query.descending ? $0.0 > $1.0 : $0.0 < $1.0 }.flatMap(\.1)
                } else if query.order == .feed {
                    ordered = query.descending ? merged.reversed() : merged
                } else {
                    ordered = merged.indices.sorted { i, j in
                        switch (key(merged[i]), key(merged[j])) {
                        case let (x?, y?) where x != y: query.descending ? x > y : x < y
                        case (_?, nil): true
                        case (nil, _?): false
                        default: feedPlace[merged[i].card.id, default: (0, 0)] < feedPlace[merged[j].card.id, default: (0, 0)]
                        }
                    }.map { merged[$0] }
                }
                return Array(ordered.dropFirst(query.offset).prefix(query.limit)).map(\.card.id)
            }

            var made = 0
            for sources in [["a", "b", "c"], ["c", "a"], ["b"]] {
                for order in [StoredPageQuery.Order.feed, .price, .published, .source, .title] {
                    for descending in [false, true] {
                        for (offset, limit) in [(0, 4), (4, 4), (8, 4), (0, 100), (10, 3), (50, 5)] {
                            let query = StoredPageQuery(sources: sources, order: order, descending: descending, offset: offset, limit: limit)
                            let page = try await store.page(query)
                            made += 1
                            #expect(page.cards.map(\.card.id) == (try await expected(query)), "\(query)")
                            #expect(page.total == (try await store.cards(of: sources)).count, "\(query)")
                        }
                    }
                }
            }
            #expect(made == 180)

            let dates = try await store.page(StoredPageQuery(sources: ["a"], order: .feed, descending: false, offset: 4, limit: 1)).cards.first?.dates
            #expect(dates == KeptDates(firstSeen: at(0), lastSeen: at(0), goneSince: at(1), number: dates?.number ?? 0))
            // The views of marks: each source's list filtered first, then interleaved.
            _ = try await marks.mark(["a:1", "a:3", "b:3", "c:2", "c:3"], .read, at: at(2))
            _ = try await marks.mark(["a:4", "b:1", "c:3", "c:4", "a:2"], .star, at: at(2))
            made = 0
            for reading in [ReadingFilter.unread, .starred, .read] {
                for sources in [["a", "b", "c"], ["c", "a"]] {
                    for order in [StoredPageQuery.Order.feed, .price, .published, .source, .title] {
                        for descending in [false, true] {
                            for (offset, limit) in [(0, 3), (3, 3), (0, 100)] {
                                let query = StoredPageQuery(sources: sources, order: order, descending: descending, offset: offset, limit: limit,
                                                            reading: reading)
                                let page = try await store.page(query)
                                made += 1
                                #expect(page.cards.map(\.card.id) == (try await expected(query)), "\(query)")
                                let all = try await store.cards(of: sources).filter { reading.includes($0.dates) }
                                #expect(page.total == all.count, "\(query)")
                            }
                        }
                    }
                }
            }
            #expect(made == 180)

            // A source named twice is one source; an empty or reversed slice is empty.
            let twice = try await store.page(StoredPageQuery(sources: ["b", "a", "b"], order: .feed, descending: false, offset: 0, limit: 100))
            #expect(twice.cards.map(\.card.id) == (try await expected(StoredPageQuery(sources: ["b", "a"], order: .feed, descending: false, offset: 0, limit: 100))))
            #expect(twice.total == 8)
            #expect(try await store.page(StoredPageQuery(sources: ["a"], order: .price, descending: false, offset: 99, limit: 5)).cards.isEmpty)
            #expect(try await store.page(StoredPageQuery(sources: ["nowhere"], order: .feed, descending: false, offset: 0, limit: 5)) == StoredPage(cards: [], total: 0))

            // A price finer than a millionth, which no index orders exactly, is still in its place.
            try await store.record([listing([item("a", "1", "5", day: 3), item("a", "3", "2.5", day: 1), item("a", "4", "5", day: 3),
                                             item("a", "5", "0.99", day: 7), item("a", "6", "2.5000001", day: nil)], at: at(3), source: "a")])
            for descending in [false, true] {
                let query = StoredPageQuery(sources: ["a", "b", "c"], order: .price, descending: descending, offset: 0, limit: 100)
                #expect(try await store.page(query).cards.map(\.card.id) == (try await expected(query)))
            }
            let finest = try await store.page(StoredPageQuery(sources: ["a"], order: .price, descending: false, offset: 2, limit: 1)).cards.map(\.card.id)
            #expect(finest == ["a:6"])
        }
    }
}
