import FeedCore
import FeedSupport
import FeedEngine
import Foundation
import FeedSourceTesting
@testable import TargetDeals
import Testing

@Suite struct TargetDealsTests {
    static let base = TargetDealsSource.upstreamURL

    func source(_ responses: [String: (status: Int, body: Data)]? = nil) throws -> TargetDealsSource {
        try TargetDealsSource(settings: SourceSettings(id: "target", url: URL(string: Self.base)!, environment: [:], json: JSONBody.tape),
                              http: responses.map { RecordedUpstream($0) } ?? RecordedUpstream(snapshotsOf: TargetDealsSource.self))
    }

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: try #require(Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: "json")))
    }

    static let deal0 = Card(
        source: "target", upstreamID: "0", kind: .deal, title: "VIZIO D-Series 40\" Class 1080p Full-Array LED HD Smart TV",
        summary: "In stock · Online · Aisle B2",
        price: Price(amount: Decimal(string: "229.99")!, currency: "USD", display: "$229.99"),
        image: URL(string: "https://appstorage.target.com/app-data/native-tha-images/1.jpg"),
        details: ["aisle": "B2", "in_stock": true])

    static let deal1 = Card(
        source: "target", upstreamID: "1", kind: .deal, title: "TCL 32\" Class 3-Series HD Smart Roku TV",
        summary: "In stock · Online · Aisle G33",
        price: Price(amount: Decimal(string: "159.99")!, currency: "USD", display: "$159.99",
                     regular: Decimal(string: "209.99")!),
        image: URL(string: "https://appstorage.target.com/app-data/native-tha-images/2.jpg"),
        tags: ["sale"], details: ["aisle": "G33", "percent_off": 24, "in_stock": true])

    @Test func theRecordedListMapsToExactCards() async throws {
        let page = try await source().page(after: nil)
        #expect(page.cards.count == 20)
        #expect(page.next == nil)
        #expect(page.skipped.isEmpty)
        #expect(page.cards[0] == Self.deal0)
        #expect(page.cards[1] == Self.deal1)
        #expect(page.cards.map(\.id) == (0..<20).map { "target:\($0)" })
        // sale_price is a missing key for exactly these deals.
        #expect(page.cards.filter { $0.price?.regular == nil }.map(\.id) == ["target:0", "target:4", "target:10", "target:12"])
        #expect(page.cards.allSatisfy { $0.summary?.contains("fetch full product") != true && $0.details["description"] == nil })
        #expect(page.cards[9].price == Price(amount: Decimal(string: "12.98")!, currency: "USD", display: "$12.98",
                                             regular: Decimal(string: "25.99")!))
        #expect(page.cards[9].details["percent_off"] == 50)
    }

    @Test func anIndependentCopyOfTheListMapsToTheSameCards() async throws {
        let copy = try Self.fixture("deals_list_kyle-borth")
        let fromCopy = try await source(["\(Self.base)/deals": (200, copy)]).page(after: nil)
        let fromSnapshot = try await source().page(after: nil)
        #expect(fromCopy.cards == fromSnapshot.cards)
    }

    @Test func the2021ShapeWithoutFulfillmentOrAvailabilityMaps() async throws {
        let old = try Self.fixture("deals_list_2021_lorem")
        let page = try await source(["\(Self.base)/deals": (200, old)]).page(after: nil)
        #expect(page.cards.count == 25)
        #expect(page.skipped.isEmpty)
        #expect(page.cards[0].summary == "Aisle B2")
        #expect(page.cards[0].image == URL(string: "https://picsum.photos/id/0/300/300"))
        #expect(page.cards[0].price == Price(amount: Decimal(string: "184.06")!, currency: "USD", display: "$184.06"))
        #expect(page.cards[0].details["description"]?.stringValue?.hasPrefix("minim ad et minim ipsum") == true)
        #expect(page.cards.filter { $0.price?.regular == nil }.map(\.id) == ["target:0", "target:4", "target:19", "target:24"])
    }

    @Test func theDetailCarriesTheFullDescription() async throws {
        let card = try await source().detail(id: "1")
        var expected = Self.deal1
        let description = try #require(card.details["description"]?.stringValue)
        #expect(description.hasPrefix("The 3-Series TCL Roku TV puts all your entertainment favorites in one place"))
        #expect(description.hasSuffix("YouTube TV, Sling, Hulu and more."))
        expected.summary = description
        expected.details["description"] = .string(description)
        #expect(card == expected)
    }

    @Test func unknownIdsAreNotFound() async throws {
        await #expect(throws: SourceError.notFound("no deal with id 99")) { try await source().detail(id: "99") }
        await #expect(throws: SourceError.notFound("no deal with id abc")) { try await source().detail(id: "abc") }
    }

    @Test func aDetailForAnotherIdIsAnError() async throws {
        let body = try #require(TargetDealsSource.snapshots.first { $0.url.hasSuffix("/deals/1") }?.body)
        let upstream = try source(["\(Self.base)/deals/2": (200, body)])
        await #expect(throws: SourceError.failed("asked for deal 2, the upstream answered with deal 1")) {
            try await upstream.detail(id: "2")
        }
    }

    @Test func anUnknownCurrencySymbolKeepsTheDisplayAndSaysSo() async throws {
        let body = Data(#"{"products":[{"id":7,"title":"Kettle","regular_price":{"amount_in_cents":1999,"currency_symbol":"₿","display_string":"₿19.99"}}]}"#.utf8)
        let page = try await source(["\(Self.base)/deals": (200, body)]).page(after: nil)
        #expect(page.cards[0].price == Price(amount: Decimal(string: "19.99")!, currency: nil, display: "₿19.99"))
        #expect(page.notes == ["deal 7: unknown currency symbol \"₿\"; price shown without a currency"])
    }

    @Test func aDealWithoutATitleIsSkippedByPath() async throws {
        let body = Data(#"{"products":[{"id":7,"title":["Kettle"],"regular_price":{"amount_in_cents":1,"currency_symbol":"$"}},{"title":"No id","regular_price":{"amount_in_cents":1,"currency_symbol":"$"}}]}"#.utf8)
        let page = try await source(["\(Self.base)/deals": (200, body)]).page(after: nil)
        #expect(page.cards.isEmpty)
        #expect(page.skipped.map(\.description) == ["skipped products[0]: title is a list, expected text", "skipped products[1]: id is missing"])
    }
}
