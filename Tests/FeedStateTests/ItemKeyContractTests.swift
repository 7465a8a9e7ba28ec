import FeedConfig
import FeedCore
import FeedState
import Foundation
import Testing

/// The copies of a page's cards, looked up by their same-item keys (``ItemKeys``): the same
/// candidates in memory, in SQLite and in PostgreSQL, kept up to date as cards change and go.
extension StoreContractTests {
    static func itemCorpus(at start: Date) -> [LiveListing] {
        func post(_ source: String, _ id: String, _ title: String, _ url: String, hours: Double) -> Card {
            Card(source: source, upstreamID: id, kind: .post, title: title, url: URL(string: url),
                 published: start.addingTimeInterval(hours * 3600))
        }
        func product(_ source: String, _ id: String, _ title: String, gtin: String?) -> Card {
            Card(source: source, upstreamID: id, kind: .product, title: title, price: Price(amount: 649, currency: "GBP"),
                 details: gtin.map { ["gtin": .string($0)] } ?? [:])
        }
        let spam = (0..<65).map { post("spam", "s\($0)", "Home \($0)", "https://spam.example/home", hours: 0) }
        return [
            LiveListing(source: "hn", cards: [
                post("hn", "a", "Rust 2.0 ships with a rewritten borrow checker", "https://example.com/story?utm_source=hn", hours: 0),
            ], complete: true, at: start),
            LiveListing(source: "lobsters", cards: [
                post("lobsters", "b", "Discussion thread", "https://www.example.com/story/", hours: 1),
            ], complete: true, at: start),
            LiveListing(source: "blog", cards: [
                post("blog", "c", "Rust 2.0 ships with rewritten borrow checker today", "https://blog.example/rust", hours: 5),
                post("blog", "d", "Gardening in winter", "https://blog.example/garden", hours: 5),
                // Two words in common are not enough to be a candidate (ItemKeys.leastSharedWords).
                post("blog", "e", "Rust borrow rules for beginners explained", "https://blog.example/rules", hours: 5),
            ], complete: true, at: start),
            LiveListing(source: "shop-a", cards: [
                product("shop-a", "q45", "Quiet 45 dishwasher", gtin: "4006381333931"),
                product("shop-a", "gift", "Gift card", gtin: nil),
            ], complete: true, at: start),
            LiveListing(source: "shop-b", cards: [product("shop-b", "4471", "Dishwasher Q45 quiet", gtin: "4006381333931")],
                        complete: true, at: start),
            LiveListing(source: "spam", cards: spam, complete: true, at: start),
        ]
    }

    @Test(arguments: Backend.all) func copiesAreFoundByTheirKeysAndFollowChangesAndPurges(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let corpus = Self.itemCorpus(at: t1)
            try await state.cards.record(corpus)
            _ = try await state.search.updateSearch()
            func copies(_ ids: String...) async throws -> [String] {
                try await state.search.cards(sharingItemKeysWith: ids).map(\.card.id)
            }
            // The link without its tracking parameter, and the title's words; not the garden,
            // nor a title sharing two words.
            #expect(try await copies("hn:a") == ["blog:c", "lobsters:b"])
            #expect(try await copies("shop-a:q45") == ["shop-b:4471"])
            #expect(try await copies("shop-a:gift") == [])
            // Repeated and unknown ids are asked once and found by nothing; asked cards are
            // never their own copies.
            #expect(try await copies("hn:a", "hn:a", "nope", "blog:c") == ["lobsters:b"])
            #expect(try await copies("nope") == [])
            #expect(try await copies() == [])
            // A link 65 cards share finds none of them.
            #expect(try await copies("spam:s0") == [])
            // With the asker's marks.
            _ = try await state.marks.mark(["lobsters:b"], .read, at: t2)
            let marked = try await state.search.cards(sharingItemKeysWith: ["hn:a"])
            #expect(marked.map { $0.dates.readAt != nil } == [false, true])

            // The lobsters post now links elsewhere, and the blog post goes and is removed.
            var lobsters = corpus[1]
            lobsters.cards[0].url = URL(string: "https://lobste.rs/s/abc")
            lobsters.at = t2
            var blog = corpus[2]
            blog.cards.removeFirst()
            // (blog:e stays: the purge below removes the one card gone.)
            blog.at = t2
            try await state.cards.record([lobsters, blog])
            #expect(try await state.cards.purge({ _ in KeepPolicy(goneFor: 0, maxCards: 100) }, now: t2.addingTimeInterval(1), limit: 100) == 1)
            _ = try await state.search.updateSearch()
            #expect(try await copies("hn:a") == [])
            #expect(try await copies("shop-b:4471") == ["shop-a:q45"])

            // A copy recorded later finds a card that had none, and the card finds it.
            #expect(try await copies("blog:d") == [])
            var hn = corpus[0]
            hn.cards.append(Card(source: "hn", upstreamID: "g", kind: .post, title: "Winter gardens", url: URL(string: "https://blog.example/garden"),
                                 published: t2))
            hn.at = t2
            try await state.cards.record([hn])
            _ = try await state.search.updateSearch()
            #expect(try await copies("blog:d") == ["hn:g"])
            #expect(try await copies("hn:g") == ["blog:d"])
        }
    }
}
