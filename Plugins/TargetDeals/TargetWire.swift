import FeedCore
import FeedSupport
import Foundation

/// `GET /deals`: `{"products":[Deal]}`, one list, no paging fields.
struct TargetDealList: Decodable {
    var products: LenientList<TargetDeal>
}

/// One deal, in the list and from `GET /deals/{id}`. `sale_price` is a missing key
/// (never null) when the deal is not on sale; the 2021 shape of the API has no
/// `fulfillment` or `availability`.
struct TargetDeal: Decodable {
    var id: Int
    var title: String
    var aisle: String?
    /// In the list, a placeholder pointing at the detail endpoint.
    var description: String?
    var image_url: String?
    var regular_price: TargetPrice
    var sale_price: TargetPrice?
    var fulfillment: String?
    var availability: String?
}

/// `{"amount_in_cents":22999,"currency_symbol":"$","display_string":"$229.99"}`.
struct TargetPrice: Decodable {
    var amount_in_cents: Int
    var currency_symbol: String
    var display_string: String?
}
