import FeedCore
import FeedSupport
import Foundation

/// reqres.in demo users: `GET {url}/api/users?page=N` pages by number until
/// `total_pages`; `GET {url}/api/users/{id}` is one user (404 with `{}` when unknown).
/// The cursor is the next page number.
public struct ReqresSource: FeedSource {
    public static let plugin = "reqres"

    public static let upstreamURL = "https://reqres.in"

    public static let snapshots = [
        RecordedResponse(url: "\(upstreamURL)/api/users?page=1", bytes: PackageResources.users_page1_json),
        RecordedResponse(url: "\(upstreamURL)/api/users?page=2", bytes: PackageResources.users_page2_json),
        RecordedResponse(url: "\(upstreamURL)/api/users/2", bytes: PackageResources.user_2_json),
        RecordedResponse(url: "\(upstreamURL)/api/users/23", status: 404, bytes: PackageResources.user_23_404_json),
    ]

    let settings: SourceSettings
    let http: any HTTPTransport
    /// Sent upstream as `per_page` when set.
    let perPage: Int?

    public init(settings: SourceSettings, http: any HTTPTransport) throws {
        let options = settings.optionsReader()
        perPage = options.integer("per_page", minimum: 1)
        try options.finish(allowedKeys: ["per_page"])
        self.settings = settings
        self.http = http
    }

    public func page(after cursor: String?) async throws -> SourcePage {
        let number = cursor.flatMap(Int.init) ?? 1
        var query = [URLQueryItem(name: "page", value: "\(number)")]
        if let perPage { query.append(URLQueryItem(name: "per_page", value: "\(perPage)")) }
        let url = settings.url.appendingPathComponent("api/users").appending(queryItems: query)
        let page = try settings.json.decode(ReqresUserPage.self, from: try await fetch(url, notFound: nil))
        return SourcePage(
            cards: page.data.elements.map { card(for: $0) },
            next: page.page < page.total_pages ? "\(page.page + 1)" : nil,
            total: page.total, skipped: page.data.skipped)
    }

    public func detail(id: String) async throws -> Card {
        let missing = "no user with id \(id)"
        guard let number = Int(id), number > 0 else { throw SourceError.notFound(missing) }
        let body = try await fetch(settings.url.appendingPathComponent("api/users/\(number)"), notFound: missing)
        let user = try settings.json.decode(ReqresSingleUser.self, from: body).data
        guard user.id == number else {
            throw SourceError.failed("asked for user \(number), the upstream answered with user \(user.id)")
        }
        return card(for: user)
    }

    /// The body of a 2xx; 404 is `notFound` when a message is given, 401 names the key.
    private func fetch(_ url: URL, notFound: String?) async throws -> Data {
        let response = try await http.get(url)
        switch response.status {
        case 200..<300: return response.body
        case 401: throw SourceError.failed("unauthorized (401): set REQRES_API_KEY to a valid reqres.in key")
        case 404 where notFound != nil: throw SourceError.notFound(notFound ?? "")
        default: throw SourceError.badStatus(response.status)
        }
    }

    /// A person card: "First Last", e-mail as summary, avatar as image.
    func card(for user: ReqresUser) -> Card {
        let name = [user.first_name, user.last_name].filter { !$0.isEmpty }.joined(separator: " ")
        return Card(source: settings.id, upstreamID: "\(user.id)", kind: .person,
                    title: name.isEmpty ? "User \(user.id)" : name, summary: user.email,
                    image: user.avatar.flatMap(ConfigMapReader.httpURL))
    }
}
