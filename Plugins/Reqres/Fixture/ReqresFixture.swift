import FeedCore
import FixtureKit
import Foundation
import Reqres

/// reqres.in: `GET /reqres/api/users?page=N[&per_page=M]` and `GET /reqres/api/users/{id}`.
/// The 12 recorded users are paged like the real API; with the default `per_page` (6)
/// pages 1 and 2 are the recorded bodies byte for byte. Unknown users are a 404 with
/// `{}`. With `requiredKey`, requests without that `x-api-key` get a 401.
public struct ReqresFixture: FixtureUpstream {
    public let name = "reqres"
    let recordedPages: [Int: Data]
    let users: [JSONValue]
    let support: JSONValue
    var requiredKey: String?

    public init(recordedPages: [Int: Data], requiredKey: String? = nil) {
        self.recordedPages = recordedPages
        self.requiredKey = requiredKey
        let pages = recordedPages.keys.sorted().compactMap {
            recordedPages[$0].flatMap { try? JSONDecoder().decode(JSONValue.self, from: $0) }
        }
        users = pages.flatMap { page -> [JSONValue] in
            if case .array(let users)? = page["data"] { return users }
            return []
        }
        support = pages.first?["support"] ?? .null
    }

    public func respond(to request: FixtureRequest) -> FixtureResponse? {
        guard request.path.hasPrefix("/api/users") else { return nil }
        if let requiredKey, request.headers["x-api-key"] != requiredKey {
            return .json(Data(#"{"error":"Missing API key"}"#.utf8), status: 401)
        }
        if request.path == "/api/users" || request.path == "/api/users/" {
            return page(Int(request.query["page"] ?? "1") ?? 1, perPage: Int(request.query["per_page"] ?? "6") ?? 6)
        }
        let id = Decimal(string: String(request.path.dropFirst("/api/users/".count)))
        guard let id, let user = users.first(where: { $0["id"] == .number(id) }) else {
            return .json(Data("{}".utf8), status: 404)
        }
        return .json(JSONValue.object(["data": user, "support": support]))
    }

    private func page(_ number: Int, perPage: Int) -> FixtureResponse {
        if perPage == 6, let recorded = recordedPages[number] { return .json(recorded) }
        let perPage = max(1, perPage)
        let start = (number - 1) * perPage
        let slice = start >= 0 && start < users.count ? Array(users[start..<min(start + perPage, users.count)]) : []
        return .json(JSONValue.object([
            "page": .number(Decimal(number)), "per_page": .number(Decimal(perPage)),
            "total": .number(Decimal(users.count)),
            "total_pages": .number(Decimal((users.count + perPage - 1) / perPage)),
            "data": .array(slice), "support": support,
        ]))
    }
}

extension ReqresSource: BuiltinSource {
    public static func fixture(_ options: FixtureOptions) -> any FixtureUpstream {
        var fixture = recordedFixture
        fixture.requiredKey = options.requiredKeys["reqres"]
        return fixture
    }

    /// Made once a process: every fixture server of a test run serves the same recordings,
    /// and reading them again for each (hundreds of tests) kept the test process's threads busy.
    static let recordedFixture = ReqresFixture(recordedPages: [1: snapshots[0].body, 2: snapshots[1].body])

    public static let fixtureSources = [
        FixtureSourceEntry(id: "users", plugin: plugin, path: "/reqres", route: "reqres",
                           extraYAML: "    headers:\n      x-api-key: ${REQRES_API_KEY:-reqres-free-v1}\n"),
    ]
}
