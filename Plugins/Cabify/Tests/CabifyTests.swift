@testable import Cabify
import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import FeedSourceTesting
import FeedSupport
import Foundation
import Testing

@Suite struct CabifyTests {
    static let url = URL(string: CabifySource.upstreamURL)!
    static let snapshot = CabifySource.snapshots[0].body

    func source(options: String? = nil, body: Data = snapshot) throws -> CabifySource {
        let settings = try settingsFor(options: options)
        return try CabifySource(settings: settings, http: RecordedUpstream(bodies: [Self.url.absoluteString: body]))
    }

    func settingsFor(options: String?) throws -> SourceSettings {
        let yaml = "sources:\n  - id: cabify\n    plugin: cabify\n    url: \(Self.url)\n" + (options.map { "    options:\n" + $0 } ?? "")
        let config = try ConfigLoader(registry: SourceRegistry([CabifySource.self]), environment: [:])
            .load(text: yaml, file: "Sources.yml")
        return config.sources[0].settings
    }

    func problems(_ options: String) -> [String] {
        do {
            _ = try settingsFor(options: options)
            return []
        } catch let error as ConfigIssues {
            return error.issues.map(\.description)
        } catch {
            return ["\(error)"]
        }
    }

    @Test func snapshotMapsToExactCards() async throws {
        let page = try await source().page(after: nil)
        #expect(page.next == nil)
        #expect(page.skipped.isEmpty)
        #expect(page.cards == [
            Card(source: "cabify", upstreamID: "VOUCHER", kind: .item, title: "Cabify Voucher",
                 price: Price(amount: 5, currency: "EUR"), tags: ["2 for 1"], details: ["offer": "2 for 1"]),
            Card(source: "cabify", upstreamID: "TSHIRT", kind: .item, title: "Cabify T-Shirt",
                 price: Price(amount: 20, currency: "EUR"), tags: ["3+ for €19.00 each"],
                 details: ["offer": "3+ for €19.00 each"]),
            Card(source: "cabify", upstreamID: "MUG", kind: .item, title: "Cabify Coffee Mug",
                 price: Price(amount: Decimal(string: "7.5")!, currency: "EUR")),
        ])
        #expect(JSONLines.line(for: page.cards[2]) ==
            #"{"id":"cabify:MUG","kind":"item","price":{"amount":7.5,"currency":"EUR"},"source":"cabify","tags":[],"title":"Cabify Coffee Mug","v":1}"#)
    }

    /// The checkout totals from the official challenge README, with the default rules.
    @Test(arguments: [
        (["VOUCHER", "TSHIRT", "MUG"], "32.5"),
        (["VOUCHER", "TSHIRT", "VOUCHER"], "25"),
        (["TSHIRT", "TSHIRT", "TSHIRT", "VOUCHER", "TSHIRT"], "81"),
        (["VOUCHER", "TSHIRT", "VOUCHER", "VOUCHER", "MUG", "TSHIRT", "TSHIRT"], "74.5"),
    ])
    func defaultOffersGiveTheChallengeTotals(basket: [String], expected: String) throws {
        let products = try JSONBody.tape.decode(CabifyProductList.self, from: Self.snapshot).products.elements
        let total = products.reduce(Decimal(0)) { sum, product in
            let quantity = basket.filter { $0 == product.code }.count
            let rule = OfferRule.defaults.first { $0.code == product.code }
            return sum + (rule?.total(quantity: quantity, listPrice: product.price) ?? Decimal(quantity) * product.price)
        }
        #expect(total == Decimal(string: expected)!)
    }

    @Test func configuredOffersReplaceTheDefaults() async throws {
        let page = try await source(options: """
                  currency: GBP
                  offers:
                    - code: MUG
                      type: multibuy
                      buy: 3
                      pay: 2
            """).page(after: nil)
        #expect(page.cards.map(\.tags) == [[], [], ["3 for 2"]])
        #expect(page.cards[2].price == Price(amount: Decimal(string: "7.5")!, currency: "GBP"))
    }

    @Test func aRecordThatCannotBeACardIsSkippedAndNamed() async throws {
        let body = Data(#"{"products":[{"code":"VOUCHER","name":5,"price":5},{"code":"MUG","name":"Mug","price":7.5}]}"#.utf8)
        let page = try await source(body: body).page(after: nil)
        #expect(page.cards.map(\.id) == ["cabify:MUG"])
        #expect(page.skipped.map(\.description) == ["skipped products[0]: name is a number, expected text"])
    }

    @Test func aBulkPriceAboveTheLivePriceIsNotApplied() async throws {
        let body = Data(#"{"products":[{"code":"TSHIRT","name":"T","price":18}]}"#.utf8)
        let page = try await source(body: body).page(after: nil)
        #expect(page.cards[0].tags.isEmpty)
        #expect(page.notes == ["offer for TSHIRT not applied: €19.00 is not below its price €18.00"])
    }

    @Test(arguments: [
        ("      offers:\n        - code: VOUCHR\n          type: multibuy\n          buy: 2\n          pay: 1\n",
         "Sources.yml:7:17: sources[0].options.offers[0].code: unknown product code \"VOUCHR\" (known: MUG, TSHIRT, VOUCHER)"),
        ("      offers:\n        - code: VOUCHER\n          type: multibuy\n          buy: 0\n          pay: 1\n",
         "Sources.yml:9:16: sources[0].options.offers[0].buy: must be at least 2, got 0"),
        ("      offers:\n        - code: VOUCHER\n          type: multibuy\n          buy: 2\n          pay: 2\n",
         "Sources.yml:10:16: sources[0].options.offers[0].pay: must be less than buy (2), got 2"),
        ("      offers:\n        - code: TSHIRT\n          type: bulk\n          min_quantity: 3\n          unit_price: 25.00\n",
         "Sources.yml:10:23: sources[0].options.offers[0].unit_price: €25.00 is not below the list price of TSHIRT (€20.00)"),
        ("      offers:\n        - code: TSHIRT\n          type: bulk\n          min_quantity: 3\n          unit_price: -1\n",
         "Sources.yml:10:23: sources[0].options.offers[0].unit_price: must be greater than 0, got -1"),
        ("      offers:\n        - code: TSHIRT\n          type: bulk\n          min_quantity: 3\n          unit_price: 1e308\n",
         "Sources.yml:10:23: sources[0].options.offers[0].unit_price: 1e308 is not a plain decimal amount; write it with digits and a point, like 19.00"),
        ("      offers:\n        - code: TSHIRT\n          type: discount\n",
         "Sources.yml:8:17: sources[0].options.offers[0].type: must be one of multibuy, bulk, got \"discount\""),
        ("      offers:\n        - code: TSHIRT\n          min_quantity: 3\n",
         "Sources.yml:7:11: sources[0].options.offers[0].type: is required (multibuy or bulk)"),
        ("      offers:\n        - {code: MUG, type: multibuy, buy: 2, pay: 1}\n        - {code: MUG, type: multibuy, buy: 3, pay: 2}\n",
         "Sources.yml:8:18: sources[0].options.offers[1].code: \"MUG\" already has an offer; give each product one"),
        ("      currency: euro\n",
         "Sources.yml:6:17: sources[0].options.currency: expected an ISO 4217 code such as EUR, got \"euro\""),
        ("      offers: 5\n",
         "Sources.yml:6:15: sources[0].options.offers: expected a list, got the number 5"),
        ("      discount: 5\n",
         "Sources.yml:6:7: sources[0].options.discount: unknown key (known: currency, offers)"),
    ] as [(String, String)])
    func badOfferRulesAreConfigErrorsWithPositions(options: String, expected: String) {
        #expect(problems(options) == [expected])
    }
}
