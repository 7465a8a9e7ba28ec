import FeedCore
import FeedSupport
import Foundation

/// The Cabify shop: one list of products (`code`, `name`, `price`), no paging, no
/// detail endpoint. Discount rules come from Sources.yml and show as tags.
public struct CabifySource: FeedSource {
    public static let plugin = "cabify"

    /// Where the challenge's products live (the gist the Cabify README links to).
    public static let upstreamURL =
        "https://gist.githubusercontent.com/palcalde/6c19259bd32dd6aafa327fa557859c2f/raw/ba51779474a150ee4367cda4f4ffacdcca479887/Products.json"

    public static let snapshots = [RecordedResponse(url: upstreamURL, bytes: PackageResources.products_json)]

    let settings: SourceSettings
    let http: any HTTPTransport
    let currency: String
    let offers: [OfferRule]

    public init(settings: SourceSettings, http: any HTTPTransport) throws {
        let options = settings.optionsReader()
        let currency = options.currency("currency", default: "EUR")
        let offers = OfferRule.read(from: options)
        // The recorded catalogue is the upstream's: check codes and prices against it
        // when the source points there. Other shops are checked when they answer.
        if settings.url.absoluteString == Self.upstreamURL,
           let recorded = try? settings.json.decode(CabifyProductList.self, from: Self.snapshots[0].body) {
            OfferRule.check(offers, against: recorded.products.elements, currency: currency)
        }
        try options.finish(allowedKeys: ["currency", "offers"])
        self.settings = settings
        self.http = http
        self.currency = currency
        self.offers = offers.map(\.rule)
    }

    public func page(after cursor: String?) async throws -> SourcePage {
        let list = try await http.getJSON(CabifyProductList.self, from: settings.url, with: settings.json)
        var notes: [String] = []
        let cards = list.products.elements.map { product in
            card(for: product, notes: &notes)
        }
        return SourcePage(cards: cards, next: nil, total: cards.count, skipped: list.products.skipped, notes: notes)
    }

    /// The card for one product, with its offer when a rule names it and applies.
    func card(for product: CabifyProduct, notes: inout [String]) -> Card {
        var card = Card(
            source: settings.id, upstreamID: product.code, kind: .item, title: product.name,
            price: Price(amount: product.price, currency: currency))
        guard let rule = offers.first(where: { $0.code == product.code }) else { return card }
        if case .bulk(_, let price) = rule.deal, price >= product.price {
            notes.append("offer for \(product.code) not applied: \(Money.format(price, currency: currency)) is not below its price \(Money.format(product.price, currency: currency))")
            return card
        }
        let label = rule.label(currency: currency)
        card.tags = [label]
        card.details = ["offer": .string(label)]
        return card
    }
}
