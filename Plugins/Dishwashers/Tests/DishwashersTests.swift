@testable import Dishwashers
import FeedConfig
import FeedCore
import FeedEngine
import FeedSourceTesting
import Foundation
import Testing

@Suite struct DishwashersTests {
    static let recorded = Dictionary(uniqueKeysWithValues: DishwashersSource.snapshots.map { ($0.url, $0.body) })
    static let images = "https://raw.githubusercontent.com/pjcook/codingtest/master/images/"

    func source(grid: String = DishwashersSource.gridURL, detailURL: String? = DishwashersSource.productPageURL,
                responses: [String: Data] = recorded) throws -> DishwashersSource {
        var yaml = "sources:\n  - id: dishwashers\n    plugin: dishwashers\n    url: \(grid)\n"
        if let detailURL { yaml += "    options:\n      detail_url: \(detailURL)\n" }
        let settings = try ConfigLoader(registry: SourceRegistry([DishwashersSource.self]), environment: [:])
            .load(text: yaml, file: "Sources.yml").sources[0].settings
        return try DishwashersSource(settings: settings, http: RecordedUpstream(bodies: responses))
    }

    @Test func theGridMapsToExactCardsWithTheMojibakeRepaired() async throws {
        let page = try await source().page(after: nil)
        #expect(page.cards.count == 20)
        #expect(page.skipped.isEmpty)
        #expect(page.next == nil)
        #expect(page.cards[0] == Card(
            source: "dishwashers", upstreamID: "3294410", kind: .product,
            title: "Neff S513M60X1G Integrated Dishwasher, Stainless Steel",
            summary: "Neff · rated 4.75/5 from 4 reviews",
            price: Price(amount: 660, currency: "GBP"),
            image: URL(string: "\(Self.images)237048107.jpeg"),
            tags: ["Claim £50 cashback (via redemption)"],
            details: [
                "brand": "Neff", "code": "88701324", "rating": 4.75, "reviews": 4,
                "special_offer": "Claim £50 cashback (via redemption)",
                "services": ["2 year guarantee included", "5 years Added Care for your home appliance (includes guarantee period) £150.00"],
            ]))
        let text = page.cards.map { "\($0.title) \($0.tags) \($0.details)" }.joined()
        #expect(!text.contains("Â") && !text.contains("â€"))
    }

    @Test func theComplexGridHasARangeAProperPoundAndAnImageNameWithAQuestionMark() async throws {
        let page = try await source(grid: DishwashersSource.complexGridURL).page(after: nil)
        #expect(page.skipped.isEmpty)
        let range = try #require(page.cards.first { $0.id == "dishwashers:3799401" })
        #expect(range.title == "Indesit DSFE1B10 Dishwasher, A+ Energy Rating")
        #expect(range.price == Price(amount: Decimal(string: "239.00")!, currency: "GBP", display: "£239.00–£239.99",
                                     min: Decimal(string: "239.00")!, max: Decimal(string: "239.99")!))
        let indesit = try #require(page.cards.first { $0.id == "dishwashers:1391191" })
        #expect(indesit.details["services"] == ["2 year guarantee included",
                                                "5 years Added Care for your home appliance (includes guarantee period) £100.00"])
        let question = try #require(page.cards.first { $0.id == "dishwashers:3343710" })
        #expect(question.image?.absoluteString == "\(Self.images)237173637.jpeg%3F")
    }

    @Test func bothGridShapesOfTriggeredRulesAndSwatchAvailableDecode() async throws {
        func raw(_ url: String) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: try #require(Self.recorded[url])) }
        if case .array = try raw(DishwashersSource.gridURL)["triggeredRules"] {} else { Issue.record("expected a list") }
        if case .object = try raw(DishwashersSource.complexGridURL)["triggeredRules"] {} else { Issue.record("expected an object") }
        for url in [DishwashersSource.gridURL, DishwashersSource.complexGridURL] {
            let page = try await source(grid: url).page(after: nil)
            #expect(page.cards.count == 20 && page.skipped.isEmpty)
        }
    }

    @Test func anEarlierPriceBecomesRegularAndAnUnreadablePriceSkipsTheProduct() async throws {
        let grid = Data(#"{"products":[{"productId":"1","title":"A","price":{"was":"300.00","then1":"","then2":"","now":"250.00","currency":"GBP"},"outOfStock":true,"swatchAvailable":""},{"productId":"2","title":"B","price":{"now":"call us","currency":"GBP"}}],"triggeredRules":{}}"#.utf8)
        let page = try await source(responses: [DishwashersSource.gridURL: grid]).page(after: nil)
        #expect(page.cards.map(\.price) == [Price(amount: 250, currency: "GBP", regular: 300)])
        #expect(page.cards[0].tags == ["out of stock"])
        #expect(page.skipped.map(\.description) == ["skipped products[1]: price.now \"call us\" is not an amount"])
    }

    @Test func theProductPageBecomesADetailCard() async throws {
        let card = try await source().detail(id: "3294410")
        #expect(card.title == "Neff S513M60X1G Integrated Dishwasher, Stainless Steel")
        #expect(card.price == Price(amount: 660, currency: "GBP"))
        #expect(card.tags == ["Claim £50 cashback (via redemption)"])
        #expect(card.details["included_services"] == ["2 year guarantee included"])
        #expect(card.details["code"] == "88701324")
        guard case .array(let gallery)? = card.details["gallery"], case .array(let specs)? = card.details["specs"] else {
            Issue.record("gallery and specs are lists")
            return
        }
        #expect(gallery.count == 8)
        #expect(gallery.first == .string("\(Self.images)237048107.jpeg"))
        #expect(gallery.last == .string("\(Self.images)237048107alt9.jpeg"))
        #expect(specs.count == 31)
        #expect(specs.first == ["name": "Dimensions", "value": "H81.5 x W59.8 x D55cm"])
        let information = try #require(card.details["productInformation"]?.stringValue)
        #expect(information.hasPrefix("Enjoy cooking and your meal even more with the knowledge that washing up won’t be an issue"))
        #expect(information.contains("perfection.\n\nFor your convenience"))
        #expect(information.contains("\n• Childproof Door lock\n• Three special options: VarioSpeedPlus, HygienePlus, Extra Dry\n"))
        #expect(information.contains("Delay timer (1 – 24 hours)"))
        #expect(!information.contains("<") && !information.contains("&nbsp;"))
        #expect(card.summary == information.components(separatedBy: "\n").first)
    }

    @Test func theProductPageOfAnotherProductIsNeverAttached() async throws {
        await #expect(throws: SourceError.noDetail("the upstream has no product page for 1391191 (it answers with product 3294410)")) {
            try await source().detail(id: "1391191")
        }
        await #expect(throws: SourceError.noDetailEndpoint) { try await source(detailURL: nil).detail(id: "3294410") }
    }

    @Test func detailURLsMayNameTheId() async throws {
        let page = try #require(Self.recorded[DishwashersSource.productPageURL])
        let source = try source(detailURL: "https://shop.test/products/{id}.json",
                                responses: ["https://shop.test/products/3294410.json": page])
        #expect(try await source.detail(id: "3294410").id == "dishwashers:3294410")
    }
}

@Suite struct MojibakeTests {
    @Test(arguments: [
        ("Claim Â£50 cashback", "Claim £50 cashback"),
        ("washing up wonâ€™t be", "washing up won’t be"),
        ("Delay timer (1 â€“ 24 hours)", "Delay timer (1 – 24 hours)"),
        ("70Â°C", "70°C"),
        ("CafÃ©", "Café"),
        ("Proper £100.00 stays", "Proper £100.00 stays"),
        ("Crème brûlée stays", "Crème brûlée stays"),
        ("plain ASCII", "plain ASCII"),
        ("won’t (already right)", "won’t (already right)"),
    ])
    func repairsOnlyTextThatRoundTrips(broken: String, expected: String) {
        #expect(Mojibake.repair(broken) == expected)
    }
}
