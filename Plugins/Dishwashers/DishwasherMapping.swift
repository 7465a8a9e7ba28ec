import FeedCore
import FeedSupport
import Foundation

/// Grid products and the product page to cards: pure functions of the wire models.
struct DishwasherMapping {
    let source: String
    /// Image file names are resolved against this folder URL.
    let imageBase: URL
    /// `imageBase` as absolute text, to which a plain name is simply appended: resolving
    /// 5,000 names one by one was a third of mapping a large grid.
    private let imageFolder: String?

    init(source: String, imageBase: URL) {
        self.source = source
        self.imageBase = imageBase
        let probe = URL(string: "x", relativeTo: imageBase)?.absoluteString
        imageFolder = probe.flatMap { $0.hasSuffix("/x") ? String($0.dropLast()) : nil }
    }

    private static let segmentCharacters: CharacterSet = {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#")
        return allowed
    }()

    /// `237173637.jpeg?` → `<image_base>237173637.jpeg%3F`: the name is one path segment.
    func imageURL(_ name: String?) -> URL? {
        guard let name, !name.isEmpty else { return nil }
        if let imageFolder, name != ".", name != "..", name.utf8.allSatisfy(Self.isPlain) {
            return URL(string: imageFolder + name)
        }
        guard let escaped = name.addingPercentEncoding(withAllowedCharacters: Self.segmentCharacters) else { return nil }
        return URL(string: escaped, relativeTo: imageBase)?.absoluteURL
    }

    /// Letters, digits, `.`, `-`, `_`: nothing to escape, nothing a URL would read as a scheme.
    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }

    func price(_ wire: DishwasherPrice) -> Price {
        let currency = wire.currency.flatMap { $0.isEmpty ? nil : $0 }
        switch wire.now {
        case .amount(let amount):
            return Price(amount: amount, currency: currency, regular: wire.regular)
        case .range(let from, let to):
            return Price(amount: from, currency: currency,
                         display: "\(Money.format(from, currency: currency))–\(Money.format(to, currency: currency))",
                         regular: wire.regular, min: from, max: to)
        }
    }

    func card(for product: DishwasherProduct) -> Card {
        let offer = product.displaySpecialOffer.map(Mojibake.repair).flatMap { $0.isEmpty ? nil : $0 }
        var details: [String: JSONValue] = [:]
        if let brand = product.brand, !brand.isEmpty { details["brand"] = .string(brand) }
        if let rating = product.averageRating { details["rating"] = .number(rating) }
        if let reviews = product.reviews { details["reviews"] = .number(Decimal(reviews)) }
        if let code = product.code { details["code"] = .string(code) }
        if let offer { details["special_offer"] = .string(offer) }
        if let services = product.additionalServices, !services.isEmpty {
            details["services"] = .array(services.map { .string(Mojibake.repair($0)) })
        }
        if product.outOfStock == true { details["out_of_stock"] = .bool(true) }
        return Card(
            source: source, upstreamID: product.productId, kind: .product, title: Mojibake.repair(product.title),
            summary: summary(brand: product.brand, rating: product.averageRating, reviews: product.reviews),
            price: price(product.price), image: imageURL(product.image),
            tags: (offer.map { [$0] } ?? []) + (product.outOfStock == true ? ["out of stock"] : []),
            details: details)
    }

    /// `Neff · rated 4.75/5 from 4 reviews`.
    func summary(brand: String?, rating: Decimal?, reviews: Int?) -> String? {
        var parts: [String] = []
        if let brand, !brand.isEmpty { parts.append(brand) }
        if let rating, let reviews, reviews > 0 {
            parts.append("rated \(rating)/5 from \(reviews) review\(reviews == 1 ? "" : "s")")
        }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }

    /// The product page as a card: gallery, description, included services, specs.
    func card(for page: DishwasherProductPage) -> Card {
        let offer = page.displaySpecialOffer.map(Mojibake.repair).flatMap { $0.isEmpty ? nil : $0 }
        let information = page.details?.productInformation.map { HTMLText.lines(Mojibake.repair($0)) }
        let gallery = (page.media?.images?.urls ?? []).compactMap(imageURL)
        let specs = (page.details?.features?.first?.attributes ?? []).map { attribute -> JSONValue in
            ["name": .string(Mojibake.repair(attribute.name)), "value": .string(Mojibake.repair(attribute.value ?? ""))]
        }
        let included = (page.additionalServices?.includedServices ?? []).map(Mojibake.repair)
        var details: [String: JSONValue] = ["gallery": .array(gallery.map { .string($0.absoluteString) })]
        if let information { details["productInformation"] = .string(information) }
        if let offer { details["special_offer"] = .string(offer) }
        if !included.isEmpty { details["included_services"] = .array(included.map(JSONValue.string)) }
        if let code = page.code { details["code"] = .string(code) }
        if let brand = page.brand?.name, !brand.isEmpty { details["brand"] = .string(brand) }
        if !specs.isEmpty { details["specs"] = .array(specs) }
        return Card(
            source: source, upstreamID: page.productId, kind: .product, title: Mojibake.repair(page.title),
            summary: information?.components(separatedBy: "\n").first, price: price(page.price),
            image: gallery.first, tags: offer.map { [$0] } ?? [], details: details)
    }
}
