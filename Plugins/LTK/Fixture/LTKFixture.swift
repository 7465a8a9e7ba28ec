import FeedCore
import FixtureKit
import Foundation
import LTK

/// The LTK feed: `GET /ltk/api/ltk/v2/ltks/?featured=true&limit=N[&last_id=…&seed=…]` serves
/// the posts after `last_id` (with their products and profiles, joined as upstream) from
/// the snapshot pages, and a `meta.next_url` that points back at this server.
public struct LTKFixture: FixtureUpstream {
    public let name = "ltk"
    let posts: [JSONValue]
    let products: [JSONValue]
    let profiles: [String: JSONValue]
    let seed: String

    public init(pages: [Data]) {
        let feeds = pages.compactMap { try? JSONDecoder().decode(JSONValue.self, from: $0) }
        func list(_ key: String) -> [JSONValue] {
            feeds.flatMap { feed -> [JSONValue] in
                if case .array(let items)? = feed[key] { return items }
                return []
            }
        }
        posts = list("ltks")
        products = list("products")
        profiles = Dictionary(list("profiles").compactMap { profile in profile["id"]?.stringValue.map { ($0, profile) } },
                              uniquingKeysWith: { first, _ in first })
        seed = feeds.first?["meta"]?["seed"]?.stringValue ?? "0"
    }

    public func respond(to request: FixtureRequest) -> FixtureResponse? {
        guard request.path == "/api/ltk/v2/ltks/" || request.path == "/api/ltk/v2/ltks" else { return nil }
        let limit = max(1, Int(request.query["limit"] ?? "20") ?? 20)
        var start = 0
        if let last = request.query["last_id"] {
            guard let index = posts.firstIndex(where: { $0["id"]?.stringValue == last }) else {
                return .json(Data(#"{"error":"unknown last_id"}"#.utf8), status: 400)
            }
            start = index + 1
        }
        let page = Array(posts[min(start, posts.count)..<min(start + limit, posts.count)])
        let ids = Set(page.compactMap { $0["id"]?.stringValue })
        var pageProfiles: [JSONValue] = []
        var seen = Set<String>()
        for post in page {
            if let id = post["profile_id"]?.stringValue, let profile = profiles[id], seen.insert(id).inserted {
                pageProfiles.append(profile)
            }
        }
        var meta: [String: JSONValue] = [
            "num_results": .number(Decimal(page.count)), "total_results": .number(Decimal(posts.count)),
            "limit": .number(Decimal(limit)), "seed": .string(seed),
        ]
        if let last = page.last?["id"]?.stringValue {
            meta["last_id"] = .string(last)
            if start + limit < posts.count {
                meta["next_url"] = .string("\(request.baseURL.absoluteString)/api/ltk/v2/ltks/?featured=true&last_id=\(last)&limit=\(limit)&seed=\(seed)")
            }
        }
        let body: [String: JSONValue] = [
            "ltks": .array(page),
            "products": .array(products.filter { $0["ltk_id"]?.stringValue.map(ids.contains) ?? false }),
            "profiles": .array(pageProfiles),
            "meta": .object(meta),
        ]
        return .json(JSONValue.object(body))
    }
}

extension LTKSource: BuiltinSource {
    public static func fixture(_ options: FixtureOptions) -> any FixtureUpstream {
        recordedFixture
    }

    /// Made once a process: every fixture server of a test run serves the same recordings,
    /// and reading them again for each (hundreds of tests) kept the test process's threads busy.
    static let recordedFixture = LTKFixture(pages: snapshots.map(\.body))

    public static let fixtureSources = [
        FixtureSourceEntry(id: "ltk", plugin: plugin, path: "/ltk/api/ltk/v2/ltks/?featured=true&limit=20", route: "ltk"),
    ]
}
