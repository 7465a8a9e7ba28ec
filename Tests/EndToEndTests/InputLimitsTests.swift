import FeedCore
import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// Every number and string of Sources.yml and the command line is checked before it is
/// used: no input crashes the binary, every problem has its line and column (issue 15,
/// defects 2, 5, 6 and 8).
@Suite struct InputLimitsTests {
    static func entry(_ lines: String) -> String {
        """
        sources:
          - id: shop
            plugin: cabify
        \(lines)
        """
    }

    @Test func outOfRangeValuesAreConfigErrorsWithPositions() async throws {
        let workspace = try Workspace(sourcesYml: Self.entry("""
                url: http://user:hunter2@127.0.0.1:99999/p.json?api_key=k3y&X-Amz-Signature=s1g
                timeout: 1e300
                retries: 1000000000
                max_pages: 99999999999999999999
                cache_ttl: -1
                deadline: 0
                headers:
                  "bad header": x
                  x-split: "a\\r\\nInjected: yes"
            """))
        let run = try await workspace.aggregate("validate")
        #expect(run.status == 2)
        #expect(run.stdout == "")
        #expect(run.stderrLines == [
            #"Sources.yml:4:10: sources[0].url: port 99999 is out of range (1 to 65535) in "http://user:REDACTED@127.0.0.1:99999/p.json?api_key=REDACTED&X-Amz-Signature=REDACTED""#,
            "Sources.yml:5:14: sources[0].timeout: must be from 0.1 s to 3600 s, got 1e300",
            "Sources.yml:6:14: sources[0].retries: must be at most 10, got 1000000000",
            "Sources.yml:7:16: sources[0].max_pages: 99999999999999999999 is too large; use a whole number from 1 up to 10000",
            "Sources.yml:8:16: sources[0].cache_ttl: must be from 0 s to 31536000 s, got -1",
            "Sources.yml:9:15: sources[0].deadline: must be from 1 s to 86400 s, got 0",
            #"Sources.yml:11:7: sources[0].headers.bad header: "bad header" is not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only)"#,
            "Sources.yml:12:7: sources[0].headers.x-split: the value contains a line break or NUL, which would split the request (value not shown)",
        ])
        #expect(!run.stderr.contains("hunter2") && !run.stderr.contains("k3y") && !run.stderr.contains("s1g"))
    }

    @Test func portZeroAndTinyTimeoutsAreCaughtByValidate() async throws {
        let workspace = try Workspace(sourcesYml: Self.entry("""
                url: http://127.0.0.1:0/p.json
                timeout: 1e-9
            """))
        let run = try await workspace.aggregate("validate")
        #expect(run.status == 2)
        #expect(run.stderrLines == [
            #"Sources.yml:4:10: sources[0].url: port 0 is out of range (1 to 65535) in "http://127.0.0.1:0/p.json""#,
            "Sources.yml:5:14: sources[0].timeout: must be from 0.1 s to 3600 s, got 1e-9",
        ])
    }

    @Test func hugeAndNegativePagesAreUsageErrorsNotCrashes() async throws {
        let workspace = try Workspace(sourcesYml: Self.entry(
            "    url: https://gist.githubusercontent.com/palcalde/6c19259bd32dd6aafa327fa557859c2f/raw/ba51779474a150ee4367cda4f4ffacdcca479887/Products.json\n"))
        let negative = try await workspace.run("--page", "-1", "--offline")
        #expect(negative.status == 2)
        #expect(negative.stderrLines.first == "Error: --page must be between 1 and 1000000, got -1")
        let huge = try await workspace.run("--page", "1000000", "--per-page", "1000", "--offline")
        #expect(huge.status == 0)
        #expect(huge.stdout == "")
        #expect(huge.stderrLines == ["aggregate: page 1000000 is past the end: there is 1 page (3 cards at 1000 per page)"])
    }

    @Test func anEmptyDigestNameIsAUsageError() async throws {
        let workspace = try Workspace(sourcesYml: Self.entry("    url: http://127.0.0.1:9/p.json\n"))
        let run = try await workspace.run("digest", "--name", "")
        #expect(run.status == 2)
        #expect(run.stderrLines.first == "Error: --name must not be empty: give the digest a name such as daily")
    }

    /// One slow source cannot hold the feed past its `deadline`; the others print.
    /// The source answers after 30 s (inside its 60 s timeout) and the run is asked to end
    /// after 1 s: a run that waited would have its cards and exit 0. No bound on the run's
    /// own time: on a loaded CI machine starting the process alone took 4 s, and a whole
    /// run of this test 33 s.
    @Test func aSlowSourceFailsAtItsDeadlineAndTheOthersPrint() async throws {
        try await FixtureWorld.withSession(
            sources: FixtureWorld.only("cabify") + FixtureWorld.only("shop-a"),
            extra: ["cabify": "    deadline: 1\n    fallback: none\n"],
            faults: ["cabify": [Fault(latencyMs: 30_000)]]
        ) { session in
            let run = try await session.run("--no-record")
            #expect(run.status == 3)
            #expect(run.stdoutLines.count == 3)
            #expect(run.stderrLines == ["cabify: stopped at the source's deadline of 1 s (raise `deadline` in Sources.yml to wait longer) (\(session.base.absoluteString)/cabify/Products.json)"])
            // The upstream had not answered when the run ended: the fixture server logs a
            // request once it has answered it.
            #expect(session.server.control.requests(to: "cabify").isEmpty, "the run waited for the 30 s source")
        }
    }

    /// "Billion laughs": 600 bytes that expand to billions of values are a config error,
    /// not a process that grows without end (0.7 s and 41 MB alone on this machine kind;
    /// no time is asserted here, a regression hangs instead).
    @Test func aYAMLAliasBombIsAConfigError() async throws {
        var yaml = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
        for (name, previous) in zip(["b", "c", "d", "e", "f", "g", "h", "i"], ["a", "b", "c", "d", "e", "f", "g", "h"]) {
            yaml += "\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ",") + "]\n"
        }
        yaml += "sources: *i\n"
        #expect(yaml.utf8.count < 700)
        let workspace = try Workspace(sourcesYml: yaml)
        let run = try await workspace.aggregate("validate")
        #expect(run.status == 2)
        #expect(run.stderrLines == ["Sources.yml:1:1: the file expands to more than 100000 values (through YAML aliases?); write it out plainly"])
    }

    @Test func aConfigThatIsNotUTF8NamesTheLineAndColumn() async throws {
        let workspace = try Workspace()
        var bytes = Data("sources:\n  - id: caf".utf8)
        bytes.append(0xE9)
        bytes.append(contentsOf: Data("\n".utf8))
        try bytes.write(to: workspace.url.appendingPathComponent("Sources.yml"))
        let run = try await workspace.aggregate("validate")
        #expect(run.status == 2)
        #expect(run.stderrLines == ["Sources.yml:2:12: the file is not UTF-8 text here; save it as UTF-8"])
    }
}
