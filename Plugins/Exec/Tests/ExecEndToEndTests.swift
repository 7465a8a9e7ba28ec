import FeedCore
import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// `plugin: exec` through the real binary: the example program against the fixture
/// server, and small shell programs for failures, timeouts and secrets.
@Suite(.serialized) struct ExecEndToEndTests {
    static func cards(_ run: Binary.Run) throws -> [Card] {
        try run.stdoutLines.map { try JSONDecoder().decode(Card.self, from: Data($0.utf8)) }
    }

    /// A workspace whose Sources.yml has one exec source running `script` (sh).
    static func shellSource(_ script: String, extra: String = "") throws -> Workspace {
        let workspace = try Workspace(sourcesYml: """
            sources:
              - id: sh
                plugin: exec
            \(extra)    options:
                  command: [sh, program.sh]
                  env: {TOKEN: "s3cret-token-value"}

            """)
        try workspace.write("program.sh", script)
        return workspace
    }

    @Test func theExampleProgramPagesThroughTheRecordedUsers() async throws {
        let entry = FixtureWorld.enabled("users-exec")
        try await FixtureWorld.withSession(sources: entry) { session in
            let run = try await session.run("--per-page", "50")
            #expect(run.status == 0)
            #expect(run.stderr == "")
            let cards = try Self.cards(run)
            // Required, not expected: a card read past an empty list would end every test.
            try #require(cards.map(\.id) == (1...12).map { "users-exec:\($0)" })
            #expect(cards[1] == Card(source: "users-exec", upstreamID: "2", kind: .person, title: "Janet Weaver",
                                     summary: "janet.weaver@reqres.in", image: URL(string: "https://reqres.in/img/faces/2-image.jpg")))
            #expect(session.requests.map { $0.query ?? "" } == ["page=1", "page=2"])
            // Cached like any page: offline serves the last good run, marked as such.
            let offline = try await session.run("--per-page", "50", "--offline")
            #expect(try Self.cards(offline).map(\.id) == cards.map(\.id))
            #expect(try Self.cards(offline).allSatisfy { $0.origin == .cache })
            #expect(session.requests.count == 2)
        }
    }

    @Test func aFailingProgramIsNamedWithItsLastStderrLineAndSecretsStayHidden() async throws {
        let workspace = try Self.shellSource("""
            echo '{"id": 1, "title": "One"}'
            echo "starting with $TOKEN" >&2
            echo "fatal: upstream said no" >&2
            exit 3
            """)
        let run = try await workspace.run("--format", "jsonl")
        #expect(run.status == 1)
        #expect(run.stdout == "")
        #expect(run.stderrLines == ["sh: sh program.sh exited with status 3: fatal: upstream said no"])
        #expect(!run.stderr.contains("s3cret"))
    }

    @Test func stderrShowsUnderVerboseWithTheSourceIDAndRedacted() async throws {
        let workspace = try Self.shellSource("""
            echo "using $TOKEN" >&2
            echo '{"id": 1, "title": "One"}'
            echo 'oops'
            """)
        let quiet = try await workspace.run("--format", "jsonl", "--refresh")
        #expect(quiet.status == 3)  // partial: a line was skipped
        #expect(try Self.cards(quiet).map(\.id) == ["sh:1"])
        let verbose = try await workspace.run("--format", "jsonl", "--verbose", "--refresh")
        #expect(verbose.stderrLines.contains("sh: using REDACTED"))
        #expect(verbose.stderrLines.contains { $0.hasPrefix("sh: skipped line 2: not a JSON object") })
        #expect(!verbose.stderr.contains("s3cret"))
    }

    @Test func theTimeoutKillsTheWholeProcessGroup() async throws {
        let workspace = try Self.shellSource("""
            sleep 30 &
            echo $! > child.pid
            sleep 30
            """, extra: "    timeout: 1\n    retries: 1\n")
        let run = try await workspace.run("--format", "jsonl")
        #expect(run.status == 1)
        #expect(run.stderrLines == ["sh: timed out after 1 s (no retries configured)"])
        let pid = try #require(Int32(String(contentsOf: workspace.url.appendingPathComponent("child.pid"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        try await Task.sleep(for: .milliseconds(300))
        // Gone, or a zombie waiting for its new parent to reap it: either way not running.
        let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?
            .split(separator: ")").last?.split(separator: " ").first
        #expect(state == nil || state == "Z", "the program's child \(pid) is still running (\(state ?? ""))")
    }

    @Test func aProgramNotOnPathIsSaidPlainly() async throws {
        let workspace = try Workspace(sourcesYml: """
            sources:
              - id: gone
                plugin: exec
                options: {command: [no-such-program-xyz, --top]}

            """)
        let run = try await workspace.run("--format", "jsonl")
        #expect(run.status == 1)
        #expect(run.stderrLines == ["gone: no-such-program-xyz is not on PATH; install it or give its path"])
    }

    /// A program starts as from a clean shell: no signal blocked, none of the standard
    /// signals (1 to 31, the low 31 bits of SigIgn; 32 and 33 are glibc's own) ignored, nothing open but stdin, stdout
    /// and stderr (`ls` itself holds one more, for /proc/self/fd), so `timeout 1 sleep 5`
    /// inside it takes one second, not five.
    @Test func aProgramStartsWithACleanSignalMaskAndOnlyStdio() async throws {
        let workspace = try Self.shellSource("""
            blocked=$(grep SigBlk /proc/self/status | tr -d '\\t')
            ignored=$(grep SigIgn /proc/self/status | tr -d '\\t')
            fds=$(ls /proc/self/fd | tr '\\n' ' ' | sed 's/ $//')
            start=$(date +%s)
            timeout 1 sleep 5
            took=$(( $(date +%s) - start ))
            printf '{"id": "1", "title": "%s %s fds %s took %s"}\\n' "$blocked" "$ignored" "$fds" "$took"
            """, extra: "    timeout: 8\n")
        let run = try await workspace.run("--format", "jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        let title = try #require(try Self.cards(run).first?.title)
        let words = title.split(separator: " ")
        #expect(words.first == "SigBlk:0000000000000000", "\(title)")
        let ignored = words.count > 1 ? UInt64(words[1].dropFirst("SigIgn:".count), radix: 16) : nil
        #expect(ignored.map { $0 & 0x7FFF_FFFF } == 0, "\(title)")
        #expect(title.contains(" fds 0 1 2 3 took "), "\(title)")
        #expect(["took 1", "took 2"].contains { title.hasSuffix($0) }, "\(title)")
    }
}
