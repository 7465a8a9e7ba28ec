import Exec
import FeedCore
import FixtureKit
import Foundation

/// The upstream of the example program: the recorded reqres.in pages at
/// `/exec-example/api/users?page=N` (a 404 past the last page).
public struct ExecExampleFixture: FixtureUpstream {
    public let name = "exec-example"
    let pages: [Int: Data]

    public func respond(to request: FixtureRequest) -> FixtureResponse? {
        guard request.path == "/api/users" else { return nil }
        guard let page = pages[Int(request.query["page"] ?? "1") ?? 1] else { return .notFound }
        return .json(page)
    }
}

extension ExecSource: BuiltinSource {
    public static func fixture(_ options: FixtureOptions) -> any FixtureUpstream {
        ExecExampleFixture(pages: recordedUserPages)
    }

    /// The example program, run from the module's folder of the checkout.
    public static var exampleProgram: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Examples/reqres_users.py").path
    }

    public static var fixtureSources: [FixtureSourceEntry] {
        [FixtureSourceEntry(id: "users-exec", plugin: plugin, path: "/exec-example", route: "exec-example",
                            extraYAML: "    enabled: false\n    options:\n      command: [python3, \"\(exampleProgram)\"]\n")]
    }
}
