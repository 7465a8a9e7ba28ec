import FeedCore
import FeedSupport
import Foundation

/// One page of `GET /api/ltk/v2/ltks/?featured=true&limit=20`: posts (`ltks`) name their
/// profile and products by id; the records sit in the sibling arrays.
struct LTKFeed: Decodable {
    var ltks: LenientList<LTKPost>
    var products: LenientList<LTKProduct>?
    var profiles: LenientList<LTKProfile>?
    var meta: LTKMeta?
}

struct LTKPost: Decodable {
    var id: String
    var hero_image: String?
    var profile_id: String?
    var caption: String?
    var share_url: String?
    /// ISO 8601 with an offset (`2022-04-10T18:05:20+00:00`).
    var date_published: String?
    var product_ids: [String]?
}

struct LTKProduct: Decodable {
    var id: String
    var hyperlink: String?
    var image_url: String?
    /// Only in the later (2022-12+) shape.
    var retailer_id: String?
    var retailer_display_name: String?
}

struct LTKProfile: Decodable {
    var id: String
    var display_name: String?
    var avatar_url: String?
    var blog_url: String?
}

/// `next_url` is the same endpoint with `last_id`, `limit` and `seed`; absent on the
/// last page. The server writes `&` as `\u0026`, which JSON decoding undoes.
struct LTKMeta: Decodable {
    var last_id: String?
    var total_results: Int?
    var next_url: String?
}
