import FeedCore
import FeedFormats
import FeedSupport
import Foundation
@testable import SameItem
import Testing

/// One item across sources (issue 64): each signal on its own, what is never joined, the
/// card that shows an item, and the labeled corpus the thresholds are held to.
@Suite struct SameItemTests {
    @Test func linksAreReadAsTheItemTheyName() throws {
        let canonical = { (text: String) in CanonicalLink.canonical(try #require(URL(string: text))) }
        let plain = try canonical("https://example.com/2026/11/story")
        #expect(plain == "//example.com/2026/11/story")
        for written in ["http://www.Example.com/2026/11/story/", "https://example.com:443/2026/11/story#comments",
                        "https://example.com/2026/11/story?utm_source=rss&utm_medium=feed", "https://example.com/2026/11/story?fbclid=x&ref=hn",
                        "https://amp.example.com/2026/11/story/amp", "https://example.com/amp/2026/11/story", "https://example.com/2026/11/story?amp=1"] {
            #expect(try canonical(written) == plain, "\(written)")
        }
        // What a query says of the page stays, in any order; another port is another site.
        #expect(try canonical("https://example.com/search?q=tv&page=2&utm_campaign=x") == "//example.com/search?page=2&q=tv")
        #expect(try canonical("https://example.com/search?page=2&q=tv") == "//example.com/search?page=2&q=tv")
        #expect(try canonical("https://example.com:8443/2026/11/story") == "//example.com:8443/2026/11/story")
        #expect(try canonical("ftp://example.com/file") == nil)
    }

    @Test func aGTINCountsOnlyWithItsCheckDigit() {
        #expect(ProductCode.gtin("5012345678900") == "05012345678900")
        #expect(ProductCode.gtin("05012345678900") == "05012345678900")
        #expect(ProductCode.gtin("5012345678901") == nil)
        #expect(ProductCode.gtin("96385074") == "00000096385074")
        #expect(ProductCode.gtin("036000291452") == "00036000291452")
        #expect(ProductCode.gtin("0000000000000") == nil)
        #expect(ProductCode.gtin("50123456789") == nil)
        #expect(ProductCode.variants(in: TitleWords("Apple iPhone 17 Pro 256GB Deep Blue").all) == ["256gb", "blue"])
        #expect(ProductCode.variants(in: TitleWords("Samsung 55 inch QLED TV").all) == ["55in"])
    }

    @Test func titlesCompareByWhatTheySay() {
        let a = TitleWords("Apple releases iOS 19.2 with new Siri features and bug fixes")
        let b = TitleWords("iOS 19.2 released with new Siri features, bug fixes")
        #expect(a.numbers == ["19.2"] && b.numbers == ["19.2"])
        #expect(a.likeness(to: b) >= ItemMatcher.titleLikeness)
        #expect(TitleWords("Crème brûlée, café").all == ["creme", "brulee", "cafe"])
    }

    static func post(_ source: String, _ id: String, _ title: String, _ url: String, hours: Double = 0) -> Card {
        Card(source: source, upstreamID: id, kind: .post, title: title, url: URL(string: url),
             published: Date(timeIntervalSince1970: 1_795_000_000 + hours * 3600))
    }

    static func product(_ source: String, _ id: String, _ title: String, _ amount: Decimal, _ currency: String = "GBP", gtin: String? = nil) -> Card {
        Card(source: source, upstreamID: id, kind: .product, title: title, price: Price(amount: amount, currency: currency),
             url: URL(string: "https://\(source).example/p/\(id)"), details: gtin.map { ["gtin13": .string($0)] } ?? [:])
    }

    @Test func whatIsNeverJoined() {
        let matcher = ItemMatcher()
        // One source's two cards, numbers that disagree, posts four days apart.
        #expect(matcher.items([Self.post("hn", "1", "A", "https://x.example/a"), Self.post("hn", "2", "B", "https://x.example/a?utm_source=y")]).isEmpty)
        #expect(matcher.items([Self.post("a", "1", "iOS 18.1 released with Apple Intelligence features", "https://a.example/1"),
                               Self.post("b", "1", "iOS 18.2 released with Apple Intelligence features", "https://b.example/1")]).isEmpty)
        #expect(matcher.items([Self.post("a", "1", "Weekly market update stocks rise on rate hopes", "https://a.example/1"),
                               Self.post("b", "1", "Weekly market update stocks rise on rate hopes", "https://b.example/1", hours: 96)]).isEmpty)
        // Under one GTIN, two colours are two products.
        #expect(matcher.items([Self.product("shop-a", "1", "Kettle Black", 30, gtin: "5012345678900"),
                               Self.product("shop-b", "1", "Kettle White", 30, gtin: "5012345678900")]).isEmpty)
        // A link more cards share than a common word is no one item's: 64 sources' copies
        // are one item, 65 are none; 20,000 items of one shop linking its front page are
        // not tried against each other.
        let shared = (0..<65).map { Self.post("s\($0)", "1", "Story \($0)", "https://x.example/front") }
        #expect(matcher.items(Array(shared.prefix(64))).map(\.members.count) == [64])
        #expect(matcher.items(shared).isEmpty)
        let shop = (0..<20_000).map { Self.post("shop", "\($0)", "Item \($0)", "https://shop.example/") }
        let started = ContinuousClock.now
        #expect(matcher.items(shop + [Self.post("other", "1", "Item 1", "https://shop.example/")]).isEmpty)
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func decisionsBeatTheRules() {
        let cards = [Self.post("a", "1", "One", "https://x.example/story"), Self.post("b", "1", "Two", "https://x.example/story?ref=hn"),
                     Self.post("c", "1", "Three", "https://y.example/other")]
        #expect(ItemMatcher().items(cards).map(\.members) == [[0, 1]])
        let apart = ItemMatcher(decisions: ItemDecisions(apart: [["a:1", "b:1"]]))
        #expect(apart.items(cards).isEmpty)
        let same = ItemMatcher(decisions: ItemDecisions(same: [["c:1", "a:1"]]))
        let items = same.items(cards)
        #expect(items.map(\.members) == [[0, 1, 2]])
        #expect(items.first?.joins.map(\.reason.description) == ["joined by a person (aggregate same)", "the same link (//x.example/story)"])
    }

    @Test func anItemShowsItsFirstCardWithEveryCopyAndTheBestPrice() throws {
        let cards = [Self.product("shop-a", "1", "Quiet 45 dishwasher", 699, gtin: "5012345678900"),
                     Self.product("shop-b", "9", "Quiet 45 dishwasher - free delivery", 649, gtin: "05012345678900"),
                     Self.product("shop-c", "3", "Quiet 45 dishwasher", 720, "EUR", gtin: "5012345678900")]
        let item = try #require(ItemMatcher().items(cards).first)
        let card = ItemMerge.card(item, of: cards)
        #expect(card.id == "shop-a:1")
        #expect(card.price == Price(amount: 649, currency: "GBP"))
        #expect(card.also?.map(\.id) == ["shop-b:9", "shop-c:3"])
        #expect(card.offers?.map(\.price?.amount) == [699, 649, 720])
        #expect(JSONLines.line(for: card).contains(#""also":[{"id":"shop-b:9","price":{"amount":649,"currency":"GBP"},"source":"shop-b","url":"https://shop-b.example/p/9"}"#))
    }

    /// The hashed words that find candidate titles are ``TitleWords``' words, read from the
    /// title's bytes: the same stems, numbers and stop words, over the corpus's titles and
    /// the edges of the walk (a comma or point inside a number, endings, case, accents).
    @Test func titleKeysHashTheWordsTitlesCompareBy() throws {
        let lines = String(decoding: Data(PackageResources.pairs_jsonl), as: UTF8.self).split(separator: "\n")
        struct Pair: Decodable { var a: Card; var b: Card }
        var titles = try lines.flatMap { line in
            let pair = try JSONDecoder().decode(Pair.self, from: Data(line.utf8))
            return [pair.a.title, pair.b.title]
        }
        titles += ["iOS 18.1 RELEASED, 14,000 things fixed", "Updates: 1,5 litres, 2.0x faster, v3.2.1", "a b c 1 2 3",
                   "Ceasefire talks resume as leaders meet", "BOXES boxes Boxing ties TIES", "Café crème brûlée", "x",
                   "The 55\" TV, 4K (2026) — now £649", "tested testing tests", "14,000things 1.5litres", ""]
        #expect(titles.count > 600)
        for title in titles {
            let words = TitleWords(title)
            let key = TitleKey(title)
            #expect(Set(key.words) == Set(words.words.map { FNV1a.hash($0) }), "\(title)")
            #expect(Set(key.numbers) == Set(words.numbers.map { FNV1a.hash($0) }), "\(title)")
            #expect(key.words == key.words.sorted() && Set(key.words).count == key.words.count, "\(title)")
        }
    }

    /// The labeled corpus: news feeds linking the same stories with and without tracking
    /// parameters, shops listing the same and nearly the same products, posts that share
    /// words but not a subject (Fixtures/pairs.jsonl). Precision and recall are printed.
    @Test func theCorpusIsJoinedPreciselyAndCompletely() throws {
        let lines = String(decoding: Data(PackageResources.pairs_jsonl), as: UTF8.self).split(separator: "\n")
        struct Pair: Decodable { var a: Card; var b: Card; var same: Bool; var why: String }
        var (truePositives, falsePositives, falseNegatives) = (0, 0, 0)
        var misses: [String] = []
        for line in lines {
            let pair = try JSONDecoder().decode(Pair.self, from: Data(line.utf8))
            let joined = !ItemMatcher().items([pair.a, pair.b]).isEmpty
            switch (joined, pair.same) {
            case (true, true): truePositives += 1
            case (true, false): falsePositives += 1; misses.append("joined, should not be (\(pair.why)): \(pair.a.title) | \(pair.b.title)")
            case (false, true): falseNegatives += 1; misses.append("apart, should be one (\(pair.why)): \(pair.a.title) | \(pair.b.title)")
            case (false, false): break
            }
        }
        let precision = Double(truePositives) / Double(max(1, truePositives + falsePositives))
        let recall = Double(truePositives) / Double(max(1, truePositives + falseNegatives))
        print("same-item corpus: \(lines.count) pairs, precision \(String(format: "%.3f", precision)), recall \(String(format: "%.3f", recall))")
        #expect(lines.count >= 300)
        #expect(precision >= 0.98, "\(misses.joined(separator: "\n"))")
        #expect(recall >= 0.90, "\(misses.joined(separator: "\n"))")
    }
}
