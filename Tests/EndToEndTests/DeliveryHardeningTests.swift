import FeedCore
import FeedSourceTesting
import Foundation
import FixtureServer
import Testing

/// Delivery that cannot leak or lose a report (issue 39): no redirect is followed, a 2xx
/// with a large answer is delivered once, a file holds one owed report per run, and a
/// receiver that refuses connections fails at once, in words.
@Suite(.serialized) struct DeliveryHardeningTests {
    static let hoodie = DataEdit.add(list: "products", item: ["code": "HOODIE", "name": "Cabify Hoodie", "price": 30])
    static let cap = DataEdit.add(list: "products", item: ["code": "CAP", "name": "Cabify Cap", "price": 12])

    static func run(_ workspace: Workspace, _ date: String = DeliveryTests.date) async throws -> Binary.Run {
        try await Binary.aggregate.run(["digest", "--date", date, "--name", "shop"] + workspace.stateArguments, in: workspace.url)
    }

    /// A digest `shop` of the cabify fixture delivering to `targets` (YAML flow maps, given
    /// the fixture's base URL), its baseline run done.
    static func withShop(format: String? = nil, deliver targets: (URL) -> [String],
                         _ body: (FixtureServer, URL, Workspace) async throws -> Void) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let lines = targets(base).map { "      - \($0)\n" }.joined()
            let workspace = try Workspace(sourcesYml: DeliveryTests.yaml(base, digests: "digests:\n  - name: shop\n"
                + (format.map { "    format: \($0)\n" } ?? "") + "    deliver:\n" + lines + "\n"))
            #expect(try await run(workspace).status == 0)
            try await body(server, base, workspace)
        }
    }

    /// 307 and 308 would carry the secrets and the report to another host, a 302 turns the
    /// POST into a GET whose 200 counted as delivered: each is a failure naming where it
    /// points, nothing reaches the other address, and the report waits.
    @Test(arguments: [307, 308, 302]) func aRedirectIsAFailureAndNothingFollowsIt(_ status: Int) async throws {
        try await Self.withShop(deliver: { base in ["{webhook: \"\(base.absoluteString)/_sink/moving\", headers: {X-Hook-Token: s3cret}}"] }) { server, base, workspace in
            let hook = "\(base.absoluteString)/_sink/moving"
            server.control.set("sink-moving", [Fault(status: status, redirectTo: "\(base.absoluteString)/_sink/elsewhere?key=abc")])
            server.control.edit("cabify", Self.hoodie)
            let failing = try await Self.run(workspace)
            #expect(failing.status == 1)
            #expect(failing.stderrLines == [
                "aggregate: digest 'shop': delivery to webhook \(hook) refused: HTTP \(status): it redirects to \(base.absoluteString)/_sink/elsewhere?key=REDACTED, "
                    + "and delivery follows no redirects; write the address it redirects to in deliver: (\(hook)); the report waits for the next run",
            ])
            #expect(server.control.sinkPosts(to: "elsewhere").isEmpty)
            server.control.reset()
            #expect(try await Self.run(workspace).status == 0)
            #expect(server.control.sinkPosts(to: "moving").count == 1)
            #expect(server.control.sinkPosts(to: "moving").first?.headers["x-hook-token"] == "s3cret")
        }
    }

    /// The receiver's answer is not the delivery: 2xx with 200 KB is delivered, once.
    @Test func aLargeAnswerToADeliveredReportIsNotARetry() async throws {
        try await Self.withShop(deliver: { base in ["{webhook: \"\(base.absoluteString)/_sink/chatty\"}"] }) { server, base, workspace in
            server.control.set("sink-chatty", [Fault(oversizeBytes: 200_000)])
            server.control.edit("cabify", Self.hoodie)
            let delivered = try await Self.run(workspace)
            #expect(delivered.status == 0 && delivered.stderr == "", "\(delivered.stderr)")
            #expect(try await Self.run(workspace).status == 0)
            #expect(server.control.sinkPosts(to: "chatty").count == 1)
        }
    }

    /// Two reports owed to one file: each is written in its own run, oldest first, so the
    /// second never replaces the first before anyone could read it.
    @Test func aFileHoldsOneOwedReportPerRun() async throws {
        try await Self.withShop(format: "text", deliver: { base in ["{file: out/shop.txt}"] }) { server, base, workspace in
            // No out/ yet: both reports are owed.
            server.control.edit("cabify", Self.hoodie)
            #expect(try await Self.run(workspace).status == 1)
            server.control.edit("cabify", Self.cap)
            #expect(try await Self.run(workspace).status == 1)
            try FileManager.default.createDirectory(at: workspace.url.appendingPathComponent("out"), withIntermediateDirectories: true)
            let first = try await Self.run(workspace)
            #expect(first.status == 0)
            #expect(first.stderrLines == ["digest 'shop': file \(workspace.url.path)/out/shop.txt holds one report at a time, so the next report waits for the next run"])
            let written = try workspace.read("out/shop.txt")
            #expect(written.contains("new: Cabify Hoodie"), "\(written)")
            #expect(try !workspace.read("out/shop.txt").contains("Cabify Cap"))
            let second = try await Self.run(workspace)
            #expect(second.status == 0 && second.stderr == "")
            #expect(try workspace.read("out/shop.txt").contains("new: Cabify Cap"))
        }
    }

    /// A receiver whose port refuses connections: three quick tries (0.5 s and 1 s apart),
    /// not the connection pool's reconnect loop (31.9 s), and the cause in words.
    @Test func aRefusedConnectionFailsFastInWords() async throws {
        try await Self.withShop(deliver: { base in ["{webhook: \"http://127.0.0.1:9/hook\"}"] }) { server, base, workspace in
            server.control.edit("cabify", Self.hoodie)
            let clock = ContinuousClock()
            let start = clock.now
            let failing = try await Self.run(workspace)
            #expect(clock.now - start < .seconds(8), "took \(clock.now - start)")
            #expect(failing.status == 1)
            #expect(failing.stderrLines == [
                "aggregate: digest 'shop': delivery to webhook http://127.0.0.1:9/hook failed: connection refused (http://127.0.0.1:9/hook); the report waits for the next run",
            ])
        }
    }

    /// A secret written into a webhook's URL (`?key=`) is not stored: the outbox holds the
    /// URL redacted and a keyed hash; the report is still delivered once the receiver is back.
    /// A report an earlier version stored under the raw URL is still delivered.
    @Test func aWebhookURLsSecretIsNotStoredInTheOutbox() async throws {
        try await Self.withShop(deliver: { base in ["{webhook: \"\(base.absoluteString)/_sink/keyed?key=s3cr3t-value\"}"] }) { server, base, workspace in
            let hook = "\(base.absoluteString)/_sink/keyed?key=s3cr3t-value"
            server.control.set("sink-keyed", [Fault(status: 503, retryAfter: "0")])
            server.control.edit("cabify", Self.hoodie)
            #expect(try await Self.run(workspace).status == 1)
            let stored = try await Self.outbox(workspace)
            #expect(!stored.contains("s3cr3t"), "\(stored)")
            #expect(stored.hasPrefix("webhook \(base.absoluteString)/_sink/keyed?key=REDACTED #"), "\(stored)")
            // As an earlier version stored it: under the URL as written.
            _ = try await Self.outbox(workspace, "UPDATE digest_outbox SET target = 'webhook \(hook)'")
            server.control.reset()
            #expect(try await Self.run(workspace).status == 0)
            #expect(server.control.sinkPosts(to: "keyed").count == 1)
            #expect(try await Self.outbox(workspace) == "")
        }
    }

    /// The digest state's outbox targets (or runs `sql` on it).
    static func outbox(_ workspace: Workspace, _ sql: String = "SELECT target FROM digest_outbox") async throws -> String {
        try await TestProcess.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [workspace.url.appendingPathComponent("state/state.sqlite").path, sql])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
