import FeedCore
import FeedSupport
import Foundation

/// `Products.json` as the Cabify shop serves it: `{"products":[{code,name,price}]}`.
struct CabifyProductList: Decodable {
    var products: LenientList<CabifyProduct>
}

/// One product. `price` is a JSON number that mixes integers and decimals (`5`, `7.5`),
/// decoded exactly as `Decimal`.
struct CabifyProduct: Decodable {
    var code: String
    var name: String
    var price: Decimal
}
