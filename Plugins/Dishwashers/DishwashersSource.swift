import FeedCore
import FeedSupport
import Foundation

/// A John Lewis style catalogue served as static JSON: a product grid at `url` (one
/// list, no paging) and a product page at `detail_url`, which answers with the same
/// product (3294410) whatever id is asked for.
public struct DishwashersSource: FeedSource {
    public static let plugin = "dishwashers"

    static let repository = "https://raw.githubusercontent.com/pjcook/codingtest/master"
    public static let gridURL = "\(repository)/api/search-valid-response.json"
    public static let complexGridURL = "\(repository)/api/search-valid-response-complex-price.json"
    public static let productPageURL = "\(repository)/api/product-search-response.json"
    public static let imageBase = "\(repository)/images/"

    public static let snapshots = [
        RecordedResponse(url: gridURL, bytes: PackageResources.search_valid_response_json),
        RecordedResponse(url: complexGridURL, bytes: PackageResources.search_valid_response_complex_price_json),
        RecordedResponse(url: productPageURL, bytes: PackageResources.product_search_response_json),
    ]

    let settings: SourceSettings
    let http: any HTTPTransport
    /// The product page; `{id}` is replaced by the product id. Unset: no detail.
    let detailURL: String?
    let mapping: DishwasherMapping

    public init(settings: SourceSettings, http: any HTTPTransport) throws {
        let options = settings.optionsReader()
        let detailURL = options.string("detail_url")
        if let detailURL, ConfigMapReader.httpURL(detailURL.replacingOccurrences(of: "{id}", with: "0")) == nil {
            options.report("detail_url", "expected an absolute http(s) URL (may contain {id}), got \"\(detailURL)\"")
        }
        var imageBase = options.url("image_base") ?? URL(string: Self.imageBase)
        if let base = imageBase, !base.absoluteString.hasSuffix("/") { imageBase = base.appendingPathComponent("") }
        try options.finish(allowedKeys: ["detail_url", "image_base"])
        self.settings = settings
        self.http = http
        self.detailURL = detailURL
        // `imageBase` is a valid URL here: a default constant, or checked by `url(_:)`.
        self.mapping = DishwasherMapping(source: settings.id, imageBase: imageBase ?? settings.url)
    }

    public func page(after cursor: String?) async throws -> SourcePage {
        let grid = try await http.getJSON(DishwasherGrid.self, from: settings.url, with: settings.json)
        let cards = grid.products.elements.map(mapping.card(for:))
        return SourcePage(cards: cards, total: cards.count, skipped: grid.products.skipped)
    }

    public func detail(id: String) async throws -> Card {
        guard let detailURL else { throw SourceError.noDetailEndpoint }
        let escaped = PathSegment.encode(id)
        guard let url = URL(string: detailURL.replacingOccurrences(of: "{id}", with: escaped)) else {
            throw SourceError.noDetailEndpoint
        }
        let page = try await http.getJSON(DishwasherProductPage.self, from: url, with: settings.json)
        guard page.productId == id else {
            // The static host answers every id with product 3294410's page.
            throw SourceError.noDetail("the upstream has no product page for \(id) (it answers with product \(page.productId))")
        }
        return mapping.card(for: page)
    }
}
