import FeedCore
import FixtureKit
import Foundation
import TargetDeals

/// Target's deals API: `GET /target/deals` and `GET /target/deals/{id}`. Deal 1 is the
/// recorded detail; other listed ids answer with their list item (the only real body
/// recorded for them); unknown ids answer 404.
public struct TargetFixture: FixtureUpstream {
    public let name = "target"
    let list: Data
    let details: [Int: Data]

    public init(list: Data, recordedDetails: [Int: Data]) {
        self.list = list
        var details: [Int: Data] = [:]
        let object = (try? JSONSerialization.jsonObject(with: list)) as? [String: Any]
        for item in object?["products"] as? [[String: Any]] ?? [] {
            if let id = item["id"] as? Int,
               let body = try? JSONSerialization.data(withJSONObject: item, options: [.sortedKeys, .withoutEscapingSlashes]) {
                details[id] = body
            }
        }
        self.details = details.merging(recordedDetails) { _, recorded in recorded }
    }

    public func respond(to request: FixtureRequest) -> FixtureResponse? {
        if request.path == "/deals" { return .json(list) }
        guard request.path.hasPrefix("/deals/") else { return nil }
        guard let id = Int(request.path.dropFirst("/deals/".count)), let body = details[id] else { return .notFound }
        return .json(body)
    }
}

extension TargetDealsSource: BuiltinSource {
    public static func fixture(_ options: FixtureOptions) -> any FixtureUpstream {
        recordedFixture
    }

    /// Made once a process: every fixture server of a test run serves the same recordings,
    /// and reading them again for each (hundreds of tests) kept the test process's threads busy.
    static let recordedFixture = TargetFixture(list: snapshots[0].body, recordedDetails: [1: snapshots[1].body])

    public static let fixtureSources = [FixtureSourceEntry(id: "target", plugin: plugin, path: "/target", route: "target")]
}
