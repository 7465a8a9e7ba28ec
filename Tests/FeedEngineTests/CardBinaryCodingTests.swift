import FeedCore
@testable import FeedEngine
import FeedFormats
@testable import FeedState
import FeedSupport
import Foundation
import Testing

/// The page memo's layout round-trips every card field exactly, and a damaged blob is a
/// miss (an error), never a crash.
@Suite struct CardBinaryCodingTests {
    static let card = Card(
        source: "s", upstreamID: "a/b é", kind: .deal, title: "Title \u{0} \"q\" 😀", summary: "sum",
        price: Price(amount: Decimal(string: "-24.99") ?? 0, currency: "EUR", display: "€24.99", regular: Decimal(string: "1e30"),
                     min: Decimal(string: "123456789012345678901234567890.5"), max: 0),
        image: URL(string: "https://x.test/i%20.png?q=é"), url: URL(string: "http://x.test/"),
        author: Card.Author(name: "Ω", image: nil, url: URL(string: "https://x.test/a")),
        published: Date(timeIntervalSince1970: 1_650_295_443.125), tags: ["a", "", "c"],
        details: ["n": .number(Decimal(string: "0.001") ?? 0), "list": [1, "x", true, .null, ["k": false]], "": "empty"])

    @Test func everyFieldRoundTripsExactly() throws {
        let page = SourcePage(cards: [Self.card, Card(source: "t", upstreamID: "1", kind: .item, title: "bare")],
                              next: "cursor 2", total: 42, skipped: [SkippedRecord(path: "items[3]", reason: "id is missing")],
                              notes: ["a note"])
        let decoded = try MappedPageCoding.decode(MappedPageCoding.encode(page))
        #expect(decoded.cards == page.cards)
        #expect(decoded.next == "cursor 2")
        #expect(decoded.total == 42)
        #expect(decoded.skipped == page.skipped)
        #expect(decoded.notes == ["a note"])
    }

    /// A large page (2,001 cards of varied lengths) reads back as the page.
    @Test func aLargePageReadsBackWhole() throws {
        let cards = (0..<2000).map { Card(source: "s", upstreamID: "\($0)", kind: .item, title: "Card \($0) " + String(repeating: "x", count: $0 % 97)) }
        let page = SourcePage(cards: [Self.card] + cards, next: nil)
        #expect(try MappedPageCoding.decode(MappedPageCoding.encode(page)).cards == page.cards)
    }

    /// A run's packed list gives back every card whole, its id and date read without it.
    @Test func aPackedListGivesBackEveryCardWhole() {
        var merged = Self.card
        merged.origin = .cache
        merged.also = [Card.Copy(source: "t", id: "t:9", url: URL(string: "https://t.test/9"), price: Price(amount: 3, currency: "GBP"))]
        merged.offers = [Card.Copy(source: "s", id: "s:a/b é"), Card.Copy(source: "t", id: "t:9", price: Price(amount: 3, currency: nil))]
        let cards = [merged, Card(source: "shared", upstreamID: "1", kind: .item, title: "bare"), Self.card]
        let list = CardList(packing: cards)
        #expect(list.count == 3)
        #expect(list.values == cards)
        for index in cards.indices {
            #expect(list[index] == cards[index])
            #expect(list.id(at: index) == cards[index].id)
            #expect(list.published(at: index) == cards[index].published)
            #expect(list.priceAmount(at: index) == cards[index].price?.amount)
        }
        #expect(CardList(packing: []).isEmpty)
    }

    /// What a list's cards begin alike with is kept once, cut back to a whole scalar (`é`
    /// and `è` share their first UTF-8 byte, not a character), and every card reads back
    /// whole, from a packed list and from the memo's layout.
    @Test func sharedHeadsEndOnWholeScalarsAndReadBackWhole() throws {
        let cards = [
            Card(source: "shop", upstreamID: "aé1", kind: .item, title: "1", url: URL(string: "https://x.test/a/1")),
            Card(source: "shop", upstreamID: "aè2", kind: .post, title: "2", image: URL(string: "https://x.test/i.png"),
                 url: URL(string: "https://x.test/a/22")),
            Card(source: "shop", upstreamID: "aé3", kind: .person, title: "3"),
        ]
        let shared = SharedPrefixes(of: cards)
        #expect([shared.source, shared.upstreamID, shared.image, shared.url] == ["shop", "a", "https://x.test/i.png", "https://x.test/a/"])
        #expect(SharedPrefixes(of: []) == .none)
        #expect(CardList(packing: cards).values == cards)
        #expect((0..<3).map { CardList(packing: cards).id(at: $0) } == ["shop:aé1", "shop:aè2", "shop:aé3"])
        #expect(try MappedPageCoding.decode(MappedPageCoding.encode(SourcePage(cards: cards, next: nil))).cards == cards)
    }

    @Test func everyTruncationOfABlobIsAMissNotACrash() {
        let bytes = MappedPageCoding.encode(SourcePage(cards: [Self.card], next: nil))
        for length in 0..<bytes.count {
            #expect(throws: BinaryReader.Malformed.self) { try MappedPageCoding.decode(bytes.prefix(length)) }
        }
        var flipped = bytes
        flipped[0] = 0xFF
        #expect(throws: BinaryReader.Malformed.self) { try MappedPageCoding.decode(flipped) }
    }

    @Test(arguments: ["0", "-0", "1000", "24.99", "-0.5", "0.001", "123456789.123456789", "18446744073709551615",
                      "18446744073709551616.5", "1e-30", "7.50", "100"])
    func decimalTextIsDecimalsOwnDescription(_ text: String) throws {
        let value = try #require(Decimal(string: text))
        #expect(DecimalText.string(value) == value.description)
    }
}
