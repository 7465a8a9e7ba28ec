import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// The tape decoder stands in for Foundation's `JSONDecoder`, and must change nothing a
/// user sees. Every catalogue source, through the built binary, once with the tape and
/// once with `AGGREGATE_JSON_DECODER=foundation`: the same cards, the same messages, the
/// same exit status; also for bodies that are broken in the ways upstreams break them.
@Suite struct DecoderSwitchTests {
    static let line = "aggregate: JSON bodies are decoded by Foundation's JSONDecoder alone (AGGREGATE_JSON_DECODER=foundation)"

    /// Runs `arguments` both ways and checks they agree; returns the tape's run.
    static func bothWays(_ session: FixtureSession, _ arguments: [String]) async throws -> Binary.Run {
        let tape = try await session.workspace.run(arguments: arguments + ["--refresh"], environment: ["AGGREGATE_JSON_DECODER": "tape"])
        let foundation = try await session.workspace.run(arguments: arguments + ["--refresh"],
                                                         environment: ["AGGREGATE_JSON_DECODER": "foundation"])
        #expect(foundation.status == tape.status)
        #expect(foundation.stdout == tape.stdout)
        #expect(foundation.stderrLines.filter { $0 != line } == tape.stderrLines)
        return tape
    }

    @Test(arguments: FixtureWorld.sources.filter { !FixtureWorld.shops.contains($0.id) }.map(\.id))
    func everySourceGivesTheSameCardsBothWays(_ id: String) async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only(id)) { session in
            let run = try await Self.bothWays(session, ["--all", "--format", "jsonl", "--source", id])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(!run.stdoutLines.isEmpty)
        }
    }

    /// Wrong types, nulls, a number too long for a Double, escapes and a body that is not
    /// JSON at all: the same skipped records and failures, word for word.
    @Test(arguments: [
        #"{"products":[{"code":"VOUCHER","name":5,"price":5},{"code":"MUG","name":"Mug \u00e9\ud83d\ude00","price":7.50},{"code":null,"name":"x","price":1}]}"#,
        #"{"products":[{"code":"A","name":"A","price":12345678901234567890.123456789},{"code":"B","name":"B","price":"1.5"}]}"#,
        #"{"products":{"code":"A"}}"#,
        #"<html><body>Service unavailable</body></html>"#,
        #"{"products":[{"code":"A","name":"A","price":1}]"#,
    ])
    func brokenBodiesFailTheSameWayBothWays(_ body: String) async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            session.server.control.set("cabify", [Fault(body: body), Fault(body: body)])
            let run = try await Self.bothWays(session, ["--all", "--format", "jsonl"])
            #expect(run.status != 0 || run.stdoutLines.count == 2, "\(run.stdout) \(run.stderr)")
        }
    }

    @Test func verboseSaysWhichDecoderRan() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let foundation = try await session.run("--verbose", environment: ["AGGREGATE_JSON_DECODER": "foundation"])
            let tape = try await session.run("--verbose", environment: ["AGGREGATE_JSON_DECODER": "tape"])
            #expect(foundation.stderrLines.first == Self.line)
            #expect(!tape.stderrLines.contains(Self.line))
        }
    }
}
