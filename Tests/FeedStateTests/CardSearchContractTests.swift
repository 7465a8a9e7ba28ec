import FeedConfig
import FeedCore
import FeedState
import Foundation
import Testing

/// One query language, one ranking, in memory, in SQLite and in PostgreSQL: the same
/// corpus gives the same ids in the same order.
extension StoreContractTests {
    static func searchCorpus(at start: Date) -> [LiveListing] {
        func day(_ n: Double) -> Date { start.addingTimeInterval(n * 86_400) }
        let shop = [
            Card(source: "shop", upstreamID: "tee", kind: .product, title: "Red Shirt in cotton", summary: "A soft shirt for summer",
                 price: Price(amount: Decimal(string: "19.99")!, currency: "EUR"), published: day(1), tags: ["2 for 1"]),
            Card(source: "shop", upstreamID: "kids", kind: .product, title: "Kids shirt, red", summary: "Cotton, for kids",
                 price: Price(amount: 12, currency: "EUR"), published: day(3)),
            Card(source: "shop", upstreamID: "mug", kind: .deal, title: "Café mug", summary: "Red glaze; shirt not included",
                 price: Price(amount: Decimal(string: "7.5")!, currency: "EUR"), published: day(2)),
            Card(source: "shop", upstreamID: "voucher", kind: .deal, title: "Gift card", summary: nil, price: Price(amount: 150, currency: "EUR")),
        ]
        let blog = [
            Card(source: "blog", upstreamID: "p1", kind: .post, title: "Why red shirts fade", summary: "Cotton dyes and the sun",
                 author: Card.Author(name: "Zoë Müller"), published: day(5)),
            Card(source: "blog", upstreamID: "p2", kind: .post, title: "Cafe culture", summary: "The gift card economy, explained",
                 author: Card.Author(name: "Ana"), published: day(4)),
        ]
        return [LiveListing(source: "shop", cards: shop, complete: true, at: start),
                LiveListing(source: "blog", cards: blog, complete: true, at: start)]
    }

    @Test(arguments: Backend.all) func searchFindsAndRanksTheSameOnEveryStore(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let index = state.search
            try await store.record(Self.searchCorpus(at: t1))
            func ids(_ text: String) async throws -> [String] {
                try await index.search(try CardSearch(parsing: text), offset: 0, limit: 100).cards.map(\.card.id)
            }
            // Title matches first (newest first among them), then the rest.
            // Whole words: "shirts" is not "shirt".
            #expect(try await ids("red shirt") == ["shop:kids", "shop:tee", "shop:mug"])
            #expect(try await ids("\"red shirt\"") == ["shop:tee"])
            #expect(try await ids("\"red shirts\"") == ["blog:p1"])
            #expect(try await ids("red shirt -kids") == ["shop:tee", "shop:mug"])
            #expect(try await ids("red -\"red glaze\" -fade") == ["shop:kids", "shop:tee"])
            // Any case, any accents; the author's name and the tags are searched too.
            #expect(try await ids("CAFE") == ["blog:p2", "shop:mug"])
            #expect(try await ids("zoe mueller") == [])
            #expect(try await ids("zoe muller") == ["blog:p1"])
            #expect(try await ids("\"2 for 1\"") == ["shop:tee"])
            // Filters alone, and with words.
            #expect(try await ids("source:blog") == ["blog:p1", "blog:p2"])
            #expect(try await ids("kind:deal") == ["shop:mug", "shop:voucher"])
            #expect(try await ids("gift kind:deal") == ["shop:voucher"])
            #expect(try await ids("price<20") == ["shop:kids", "shop:mug", "shop:tee"])
            #expect(try await ids("price>=12 price<=19.99 cotton") == ["shop:tee", "shop:kids"])
            #expect(try await ids("price=7.5") == ["shop:mug"])
            #expect(try await ids("-red") == ["blog:p2", "shop:voucher"])
            #expect(try await ids("source:shop source:blog gift") == ["shop:voucher", "blog:p2"])

            // Paged: a slice of the ranking, and how many it found.
            let page = try await index.search(try CardSearch(parsing: "red shirt"), offset: 1, limit: 2)
            #expect(page.cards.map(\.card.id) == ["shop:tee", "shop:mug"])
            #expect(page.total == 3)

            // A card that changes is found by its new words only; a removed one not at all.
            var changed = Self.searchCorpus(at: t1)[1]
            changed.cards[1].title = "Tea culture"
            changed.at = t2
            try await store.record([changed])
            #expect(try await ids("cafe") == ["shop:mug"])
            #expect(try await ids("tea") == ["blog:p2"])
            #expect(try await store.purge({ _ in KeepPolicy(goneFor: 0, maxCards: 1) }, now: t2, limit: 100) == 4)
            // Of equals (all last seen at once) the first ids go: the voucher and p2 stay.
            #expect(try await ids("source:shop") == ["shop:voucher"])
            #expect(try await ids("culture") == ["blog:p2"])
        }
    }

    /// Two listings of one source in one recording (a refresher's queue can hold both): the
    /// card they share is found once, by the words it was written with last.
    @Test(arguments: Backend.all) func aCardWrittenTwiceInOneRecordingIsFoundOnceByItsLastWords(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let index = state.search
            try await store.record(Self.searchCorpus(at: t1))
            // New dates too: each write's search row has a place of its own.
            var first = Self.searchCorpus(at: t1)[1]
            first.cards[1].title = "Tea culture"
            first.cards[1].published = t2
            first.at = t2
            var second = first
            second.cards[1].title = "Coffee culture"
            second.cards[1].published = t2.addingTimeInterval(3_600)
            second.at = t2.addingTimeInterval(1)
            try await store.record([first, second])
            func ids(_ text: String) async throws -> [String] {
                try await index.search(try CardSearch(parsing: text), offset: 0, limit: 100).cards.map(\.card.id)
            }
            #expect(try await ids("culture") == ["blog:p2"])
            #expect(try await ids("coffee") == ["blog:p2"])
            #expect(try await ids("tea") == [])
            #expect(try await ids("cafe") == ["shop:mug"])
            #expect(try await index.search(try CardSearch(parsing: "source:blog"), offset: 0, limit: 100).total == 2)
        }
    }

    /// SQLite and PostgreSQL write search rows apart from recording (``CardSearchIndex/updateSearch()``,
    /// the first thing a search does): once per card recorded since, as last written; none
    /// for a card seen again unchanged, or removed before its turn.
    @Test(arguments: Backend.all.filter { $0 != .memory }) func searchRowsAreWrittenOnceForWhatWasRecordedSince(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = state.cards
            let index = state.search
            let corpus = Self.searchCorpus(at: t1)
            try await store.record(corpus)
            #expect(try await index.updateSearch() == 6)
            #expect(try await index.updateSearch() == 0)
            func ids(_ text: String) async throws -> [String] {
                try await index.search(try CardSearch(parsing: text), offset: 0, limit: 100).cards.map(\.card.id)
            }
            // Changed twice, then listed again unchanged: one search row, by its last words.
            var blog = corpus[1]
            blog.cards[1].title = "Tea culture"
            blog.at = t2
            try await store.record([blog])
            blog.cards[1].title = "Coffee culture"
            blog.at = t2.addingTimeInterval(1)
            try await store.record([blog])
            blog.at = t2.addingTimeInterval(2)
            try await store.record([blog])
            #expect(try await index.updateSearch() == 1)
            #expect(try await ids("coffee") == ["blog:p2"])
            #expect(try await ids("tea") == [])
            // Changed, then gone and removed before a search: nothing to write, found by nothing.
            var shop = corpus[0]
            let mug = try #require(shop.cards.firstIndex { $0.id == "shop:mug" })
            shop.cards[mug].title = "Stone mug"
            shop.at = t2
            try await store.record([shop])
            shop.cards.remove(at: mug)
            shop.at = t2.addingTimeInterval(1)
            try await store.record([shop])
            #expect(try await store.purge({ _ in KeepPolicy(goneFor: 0, maxCards: 100) }, now: t2.addingTimeInterval(2), limit: 100) == 1)
            #expect(try await index.updateSearch() == 0)
            #expect(try await ids("stone") == [])
            #expect(try await ids("mug") == [])
        }
    }

    /// 60 cards in a few seconds (many in the same one, some undated and ranked by when
    /// they were first seen), found in the title or elsewhere: every page of every search
    /// is the slice of the specification's ranking (``CardSearch/ranked(_:)``), whatever the
    /// order the cards were recorded in.
    @Test(arguments: Backend.all) func pagesOfCardsOfTheSameSecondAreTheRankingsSlices(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let seconds = [t1, t1.addingTimeInterval(0.4), t1.addingTimeInterval(1), t1.addingTimeInterval(-3600), t2]
            let cards = (0..<60).map { n in
                Card(source: n % 3 == 0 ? "a" : "b", upstreamID: "c\((n * 37) % 61)", kind: n % 4 == 0 ? .deal : .post,
                     title: n % 5 == 0 ? "Alpha news" : "Other news", summary: n % 2 == 0 ? "alpha and beta" : "alpha only",
                     price: n % 4 == 0 ? Price(amount: Decimal(n), currency: "EUR") : nil, published: n % 7 == 0 ? nil : seconds[n % seconds.count])
            }
            // Recorded in two runs: the second run's first seen is later.
            let (early, late) = (cards.filter { $0.upstreamID.count % 2 == 0 }, cards.filter { $0.upstreamID.count % 2 == 1 })
            try await state.cards.record(["a", "b"].map { source in
                LiveListing(source: source, cards: early.filter { $0.source == source }, complete: false, at: t1) })
            try await state.cards.record(["a", "b"].map { source in
                LiveListing(source: source, cards: late.filter { $0.source == source }, complete: false, at: t2) })
            let firstSeen = Dictionary(uniqueKeysWithValues: early.map { ($0.id, t1) } + late.map { ($0.id, t2) })
            for text in ["alpha", "alpha news", "alpha -beta", "news source:a", "alpha price<30", "alpha kind:deal", "-beta", "source:b"] {
                let search = try CardSearch(parsing: text)
                let expected = search.ranked(cards.map { ($0, firstSeen[$0.id] ?? t1) }).map(\.id)
                #expect(!expected.isEmpty, "\(text)")
                for size in [1, 7, 60] {
                    var pages: [String] = []
                    for offset in stride(from: 0, to: 61, by: size) {
                        let page = try await state.search.search(search, offset: offset, limit: size)
                        #expect(page.total == expected.count, "\(text)")
                        pages += page.cards.map(\.card.id)
                    }
                    #expect(pages == expected, "\(text), pages of \(size)")
                }
            }
        }
    }

    /// 10,050 cards that all match: SQLite stops counting at 10,000 (or the page's end) and
    /// says the total is a least; the others count them all; every store pages past it.
    @Test(arguments: Backend.all) func aSearchOfVeryManyCardsCountsAtLeastAndPagesPastIt(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let cards = (0..<10_050).map { n in
                Card(source: "many", upstreamID: String(format: "%05d", n), kind: .post, title: "Item \(n)", summary: "common words",
                     published: t1.addingTimeInterval(Double(n)))
            }
            try await state.cards.record([LiveListing(source: "many", cards: cards, complete: true, at: t1)])
            let search = try CardSearch(parsing: "common words")
            let first = try await state.search.search(search, offset: 0, limit: 3)
            #expect(first.cards.map(\.card.id) == ["many:10049", "many:10048", "many:10047"])
            let counts = backend == .sqlite || backend == .sqlitePool
            #expect(first.total == (counts ? 10_000 : 10_050))
            #expect(first.totalIsAtLeast == counts)
            let deep = try await state.search.search(search, offset: 10_020, limit: 20)
            #expect(deep.cards.map(\.card.id) == (10...29).reversed().map { "many:" + String(format: "%05d", $0) })
            #expect(deep.total == (counts ? 10_040 : 10_050))
            let last = try await state.search.search(search, offset: 10_040, limit: 20)
            #expect(last.cards.map(\.card.id) == (0...9).reversed().map { "many:" + String(format: "%05d", $0) })
            #expect(last.total == 10_050)
            #expect(!last.totalIsAtLeast)
        }
    }

    @Test func textIsTokenizedTheSameWhateverItHolds() {
        #expect(SearchText.tokens("Red Shirt, cotton — 2 for 1!") == ["red", "shirt", "cotton", "2", "for", "1"])
        #expect(SearchText.tokens("Café Zoë Müller’s CRÈME brûlée") == ["cafe", "zoe", "muller", "s", "creme", "brulee"])
        #expect(SearchText.tokens("東京 trip") == ["東京", "trip"])
        #expect(SearchText.tokens("ﬁve ＦＵＬＬ") == ["five", "full"])
        #expect(SearchText.tokens(String(repeating: "a", count: 201) + " ok " + String(repeating: "é", count: 250)) == ["ok"])
    }

    @Test func queriesThatCannotBeSearchedSayWhy() throws {
        let cases: [(String, String)] = [
            ("", "give words to search for, e.g. \"red shirt\" -kids source:ltk price<100"),
            ("  -  ", "give words to search for, e.g. \"red shirt\" -kids source:ltk price<100"),
            ("kind:gadget", "kind:gadget is not a kind; kinds are deal, product, post, person, item"),
            ("price<cheap", "price<cheap: give a number after <, e.g. price<100"),
            ("price>=0.0000001", "price>=0.0000001: give at most six decimals"),
            (String(repeating: "a ", count: 33), "the search has more than 32 terms; give fewer"),
            (String(repeating: "a", count: 1001), "the search is 1001 characters long; at most 1000 are taken"),
        ]
        for (text, message) in cases {
            #expect(throws: CardSearch.Problem(description: message), "\(text)") { try CardSearch(parsing: text) }
        }
        let parsed = try CardSearch(parsing: #"Red "cotton  SHIRT" -kids -"gift card" source:ltk kind:deal price<=100 e-mail pricey"#)
        #expect(parsed.required == [["red"], ["cotton", "shirt"], ["e", "mail"], ["pricey"]])
        #expect(parsed.excluded == [["kids"], ["gift", "card"]])
        #expect(parsed.sources == ["ltk"])
        #expect(parsed.kinds == [.deal])
        #expect(parsed.prices == [CardSearch.PriceBound(comparison: .atMost, amount: 100)])
    }
}
