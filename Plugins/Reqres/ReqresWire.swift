import FeedCore
import FeedSupport
import Foundation

/// `GET /api/users?page=N`. `support` (and the older `ad`) change over time upstream and
/// are not read.
struct ReqresUserPage: Decodable {
    var page: Int
    var per_page: Int?
    var total: Int?
    var total_pages: Int
    var data: LenientList<ReqresUser>
}

/// `GET /api/users/{id}`: `{"data": User, "support": …}`; an unknown id is a 404 with `{}`.
struct ReqresSingleUser: Decodable {
    var data: ReqresUser
}

struct ReqresUser: Decodable {
    var id: Int
    var email: String?
    var first_name: String
    var last_name: String
    var avatar: String?
}
