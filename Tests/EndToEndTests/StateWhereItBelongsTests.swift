import FeedSourceTesting
import Foundation
import Testing

/// Accounts, marks and the card store live under `$XDG_STATE_HOME`, the HTTP cache alone
/// under `$XDG_CACHE_HOME` (issue 61); a state an earlier version kept in the cache
/// directory is moved once, and the run says so.
@Suite struct StateWhereItBelongsTests {
    @Test func theStateMovesOutOfTheCacheDirectoryOnce() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let workspace = session.workspace
            let home = workspace.url.path
            // Where the earlier version kept everything (the tests' XDG_CACHE_HOME is ./cache).
            let old = ["--state-dir", "cache/aggregate"]
            #expect(try await workspace.aggregate(arguments: ["refresh"] + old).status == 0)
            #expect(try await workspace.aggregate(arguments: ["user", "add", "ann", "--password-stdin"] + old, stdin: "a long enough password\n").status == 0)
            #expect(try await workspace.aggregate(arguments: ["mark", "star", "cabify:MUG"] + old).status == 0)

            let moved = try await workspace.aggregate("--stored", "--starred", "--format", "jsonl")
            #expect(moved.status == 0, "\(moved.stderr)")
            #expect(moved.stderrLines.first { $0.hasPrefix("aggregate: moved") } == "aggregate: moved the state (accounts, marks, digests, the card store: "
                + "state.sqlite, cards.sqlite) from \(home)/cache/aggregate to \(home)/.local/state/aggregate, where state belongs; "
                + "the HTTP cache stays in \(home)/cache/aggregate")
            #expect(moved.stdoutLines.count == 1)
            #expect(moved.stdoutLines.first?.contains(#""id":"cabify:MUG""#) == true)
            let files = FileManager.default
            #expect(files.fileExists(atPath: "\(home)/.local/state/aggregate/cards.sqlite"))
            #expect(!files.fileExists(atPath: "\(home)/cache/aggregate/cards.sqlite"))
            #expect(!files.fileExists(atPath: "\(home)/cache/aggregate/state.sqlite"))
            #expect(files.fileExists(atPath: "\(home)/cache/aggregate/cache.sqlite"))
            let users = try await workspace.aggregate("user", "list")
            #expect(users.stdout.contains("ann"))

            // Once: the next run finds the state where it belongs and says nothing of it.
            let again = try await workspace.aggregate("--stored", "--starred", "--format", "jsonl")
            #expect(!again.stderr.contains("moved"))
            #expect(again.stdoutLines == moved.stdoutLines)
            // XDG_STATE_HOME is honoured.
            let elsewhere = try await workspace.aggregate("--stored", "--all", "--format", "jsonl",
                                                          environment: ["XDG_STATE_HOME": "\(home)/elsewhere"])
            #expect(elsewhere.status == 0)
            #expect(elsewhere.stdoutLines.isEmpty)
            #expect(files.fileExists(atPath: "\(home)/elsewhere/aggregate"))
        }
    }
}
