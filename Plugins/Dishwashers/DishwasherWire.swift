import FeedCore
import FeedSupport
import Foundation

/// The product grid (`search-valid-response*.json`). Only `products` is read: the other
/// keys (`facets`, `crumbs`, `triggeredRules` as a list or an object …) are ignored, as
/// are the per-product `features` (junk Java objects) and `swatchAvailable` (bool or "").
struct DishwasherGrid: Decodable {
    var products: LenientList<DishwasherProduct>
}

struct DishwasherProduct: Decodable {
    var productId: String
    var title: String
    var code: String?
    var brand: String?
    var averageRating: Decimal?
    var reviews: Int?
    var price: DishwasherPrice
    /// A file name such as `237048107.jpeg` (one ends in `?`).
    var image: String?
    var additionalServices: [String]?
    var displaySpecialOffer: String?
    var outOfStock: Bool?
}

/// `{was, then1, then2, now, uom, currency}`: every field a string, `""` when unused,
/// except `now`, which is also a `{from, to}` range.
struct DishwasherPrice: Decodable {
    var was: String?
    var then1: String?
    var then2: String?
    var now: Now
    var currency: String?

    enum Now: Decodable, Equatable {
        case amount(Decimal)
        case range(from: Decimal, to: Decimal)

        private struct Range: Decodable {
            var from: String
            var to: String
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                guard let amount = Money.parse(text) else {
                    throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not an amount")
                }
                self = .amount(amount)
                return
            }
            let range = try container.decode(Range.self)
            guard let from = Money.parse(range.from), let to = Money.parse(range.to) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "range \(range.from)–\(range.to) is not two amounts")
            }
            self = .range(from: from, to: to)
        }
    }

    /// The first non-empty earlier price (`was`, then `then1`, `then2`).
    var regular: Decimal? {
        [was, then1, then2].compactMap { $0 }.first { !$0.isEmpty }.flatMap(Money.parse)
    }
}

/// The product page (`product-search-response.json`): the same body for every id.
struct DishwasherProductPage: Decodable {
    var productId: String
    var title: String
    var code: String?
    /// `{"name":"Neff","logo":"//…"}` here, unlike the grid's plain string.
    var brand: Brand?
    var price: DishwasherPrice
    var displaySpecialOffer: String?
    var additionalServices: Services?
    var media: Media?
    var details: Details?

    struct Brand: Decodable {
        var name: String?
    }

    struct Services: Decodable {
        var includedServices: [String]?
    }

    struct Media: Decodable {
        var images: Images?
        struct Images: Decodable {
            var urls: [String]?
        }
    }

    struct Details: Decodable {
        var productInformation: String?
        var features: [FeatureGroup]?
    }

    struct FeatureGroup: Decodable {
        var attributes: [Attribute]?
    }

    struct Attribute: Decodable {
        var name: String
        var value: String?
    }
}
