import FeedCore
import FeedSourceTesting
import Foundation
import FixtureServer
import Testing

/// The built binary against the fixture server: one source fails in each way an
/// upstream can fail; every other source still prints exactly what a clean run prints.
@Suite(.serialized) struct FaultIsolationTests {
    struct Case: CustomStringConvertible, Sendable {
        var name: String
        var faults: [Fault]
        var yaml = ""
        var expected: @Sendable (String) -> String
        var description: String { name }
    }

    /// `url` is the failing source's URL.
    static let cases: [Case] = [
        Case(name: "timeout", faults: [Fault(latencyMs: 2500)], yaml: "    timeout: 1\n    retries: 1\n") {
            "cabify: timed out after 1 s (no retries configured) (\($0))"
        },
        Case(name: "500", faults: [Fault(status: 500)], yaml: "    retries: 2\n") {
            "cabify: HTTP 500 after 2 tries (\($0))"
        },
        Case(name: "malformed JSON", faults: [Fault(malformedJSON: true)]) {
            "cabify: unreadable response: the body is not JSON (142 bytes) (\($0))"
        },
        Case(name: "truncated body", faults: [Fault(truncate: true)], yaml: "    retries: 1\n") {
            "cabify: the server closed the connection before the response was complete (no retries configured) (\($0))"
        },
        Case(name: "slow drip past the timeout", faults: [Fault(dripBytesPerSecond: 100)], yaml: "    timeout: 1\n    retries: 1\n") {
            "cabify: timed out after 1 s (no retries configured) (\($0))"
        },
        Case(name: "oversized body", faults: [Fault(oversizeBytes: 21 * 1024 * 1024)]) {
            "cabify: response larger than 20 MiB (raise max_body in Sources.yml to accept it) (\($0))"
        },
        Case(name: "redirect loop", faults: [Fault(redirectLoop: true)]) {
            "cabify: redirect loop (\($0))"
        },
        Case(name: "field of the wrong type", faults: [Fault(body: #"{"products":"none"}"#)]) {
            "cabify: unreadable response at products: is text, expected a list (\($0))"
        },
        Case(name: "invalid UTF-8", faults: [Fault(invalidUTF8: true)]) {
            "cabify: unreadable response: the body is not UTF-8 text (285 bytes) (\($0))"
        },
    ]

    @Test(arguments: cases)
    func oneFailingSourceNeverHidesTheOthers(_ fault: Case) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base))
            let clean = try await workspace.aggregate("--per-page", "1000", "--state-dir", "clean")
            #expect(clean.status == 0)
            #expect(clean.stderr == "")

            try workspace.write("Sources.yml", FixtureWorld.sourcesYml(
                base: base, extra: ["cabify": "    fallback: none\n" + fault.yaml]))
            server.control.set("cabify", fault.faults)
            let run = try await workspace.aggregate("--per-page", "1000", "--state-dir", "faulty")
            #expect(run.status == 3)
            let others = clean.stdoutLines.filter { !$0.contains(#""source":"cabify""#) }
            #expect(!others.isEmpty)
            #expect(run.stdoutLines == others)
            #expect(run.stderrLines == [fault.expected("\(base.absoluteString)/cabify/Products.json")])
        }
    }

    @Test func connectionRefusedIsNamed() async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let yaml = FixtureWorld.sourcesYml(base: base, extra: ["cabify": "    fallback: none\n    retries: 2\n"])
                .replacingOccurrences(of: "url: \(base.absoluteString)/cabify/", with: "url: http://127.0.0.1:1/cabify/")
            let workspace = try Workspace(sourcesYml: yaml)
            let run = try await workspace.run()
            #expect(run.status == 3)
            #expect(run.stderrLines == ["cabify: connection refused after 2 tries (http://127.0.0.1:1/cabify/Products.json)"])
            #expect(!run.stdoutLines.isEmpty)
            #expect(!run.stdout.contains(#""source":"cabify""#))
        }
    }

    /// Also: a 404 is not retried, whatever `retries` says.
    @Test func everySourceFailingExits1() async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try Workspace(sourcesYml: FixtureWorld.sourcesYml(
                base: base, sources: FixtureWorld.only("cabify"), extra: ["cabify": "    fallback: none\n"]))
            server.control.set("cabify", [Fault(status: 404)])
            let run = try await workspace.run()
            #expect(run.status == 1)
            #expect(server.control.requests.count == 1)
            #expect(run.stdout == "")
            #expect(run.stderrLines == ["cabify: HTTP 404 (\(base.absoluteString)/cabify/Products.json)"])
        }
    }

    @Test func aRecordOfTheWrongTypeIsSkippedAndTheRunIsPartial() async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, sources: FixtureWorld.only("cabify")))
            server.control.set("cabify", [Fault(body: #"{"products":[{"code":"VOUCHER","name":5,"price":5},{"code":"MUG","name":"Mug","price":7.5}]}"#)])
            let run = try await workspace.run()
            #expect(run.status == 3)
            #expect(run.stdoutLines == [#"{"id":"cabify:MUG","kind":"item","price":{"amount":7.5,"currency":"EUR"},"source":"cabify","tags":[],"title":"Mug","v":1}"#])
            #expect(run.stderrLines == ["cabify: skipped products[0]: name is a number, expected text"])
        }
    }

    /// Many broken records are ten named lines and one count; `--verbose` names them all
    /// (issue 28, defect 12). The good records still print, and the run is partial.
    @Test func manySkippedRecordsAreSummarised() async throws {
        let broken = (0..<500).map { #"{"code":"B\#($0)","name":\#($0),"price":1}"# }.joined(separator: ",")
        let body = #"{"products":["# + broken + #",{"code":"MUG","name":"Mug","price":7.5}]}"#
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), faults: ["cabify": [Fault(body: body), Fault(body: body)]]) { session in
            let run = try await session.run("--format", "jsonl")
            #expect(run.status == 3)
            #expect(run.stdoutLines.count == 1)
            #expect(run.stderrLines.count == 11)
            #expect(run.stderrLines.first == "cabify: skipped products[0]: name is a number, expected text")
            #expect(run.stderrLines.last == "cabify: skipped 490 more records (500 in all; --verbose lists every one)")
            let verbose = try await session.run("--format", "jsonl", "--verbose", "--refresh")
            #expect(verbose.stderrLines.filter { $0.hasPrefix("cabify: skipped products[") }.count == 500)
        }
    }

    /// A 200 whose every record is broken is read like a body that does not parse: the
    /// good cached copy stays and is served, marked, and the run says why (issue 28,
    /// defect 12).
    @Test func aBodyOfOnlyBrokenRecordsNeverReplacesTheGoodCopy() async throws {
        let broken = #"{"products":[{"code":"A","name":1,"price":1},{"code":"B","name":2,"price":2}]}"#
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let good = try await session.run("--format", "jsonl")
            #expect(good.status == 0 && good.stdoutLines.count == 3)
            session.server.control.set("cabify", [Fault(body: broken)])
            let run = try await session.run("--format", "jsonl", "--refresh")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdoutLines.count == 3)
            #expect(run.stdoutLines.allSatisfy { $0.contains(#""origin":"cache""#) })
            #expect(run.stderrLines.count == 1)
            #expect(run.stderrLines.first?.hasPrefix("cabify: no record could be read (2 skipped; the first, products[0]: name is a number, expected text) (http://") == true,
                    "\(run.stderr)")
            #expect(run.stderrLines.first?.contains("; using cached response from ") == true)
            // The good body is still the stored one.
            let offline = try await session.run("--format", "jsonl", "--offline")
            #expect(offline.stdoutLines.count == 3)
        }
    }
}
