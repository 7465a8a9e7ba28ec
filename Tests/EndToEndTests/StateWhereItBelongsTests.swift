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

    /// An empty `--state-dir` (a script's `$(mktemp -d)` that failed) is a usage error,
    /// not the current directory filled with state files.
    @Test func anEmptyStateLocationIsAUsageErrorNotTheCurrentDirectory() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let workspace = session.workspace
            for option in ["--state-dir", "--state"] {
                let run = try await workspace.aggregate(arguments: ["--all", option, ""])
                #expect(run.status == 2)
                #expect(run.stdout.isEmpty)
                #expect(run.stderrLines == ["aggregate: \(option) is empty: give a directory or a postgres:// URL "
                    + "(an empty one would put the state in the current directory)"])
            }
            #expect(!FileManager.default.fileExists(atPath: workspace.url.appendingPathComponent("cache.sqlite").path))
        }
    }

    static func ids(_ run: Binary.Run) -> [String] {
        run.stdoutLines.compactMap { line in (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String }
    }

    /// `aggregate backup` while `serve` answers requests and refreshes, then `restore`
    /// into a fresh state: the same cards and the same marks.
    @Test func aBackupTakenWhileServeRunsRestoresTheSameCardsAndMarks() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.sources.filter { ["cabify", "users", "dishwashers"].contains($0.id) }) { session in
            let workspace = session.workspace
            #expect(try await session.run("refresh").status == 0)
            #expect(try await session.run("mark", "star", "cabify:MUG").status == 0)
            #expect(try await session.run("mark", "read", "cabify:TSHIRT", "users:1").status == 0)
            let served = try await ServeTests.Served.start(session)
            let backup: Binary.Run
            do {
                // Readers and a refresh at the same time as the copy.
                async let load: Void = {
                    for _ in 0..<40 { _ = try? await ServeTests.get(served.base + "/feed.jsonl?per_page=100") }
                }()
                async let refresh = session.run("refresh")
                backup = try await workspace.run("backup", "state.tar")
                _ = try await refresh
                await load
            } catch {
                await served.stop()
                throw error
            }
            await served.stop()
            #expect(backup.status == 0, "\(backup.stderr)")
            #expect(backup.stderrLines == ["aggregate: backed up state.sqlite, cards.sqlite from \(workspace.url.path)/state to state.tar"])

            let restored = ["--state-dir", "restored"]
            let restore = try await workspace.aggregate(arguments: ["restore", "state.tar"] + restored)
            #expect(restore.status == 0, "\(restore.stderr)")
            #expect(restore.stderrLines == ["aggregate: restored state.sqlite, cards.sqlite from state.tar to \(workspace.url.path)/restored"])
            for view in [["--all"], ["--starred"], ["--unread", "--all"]] {
                let before = try await workspace.run(arguments: ["--stored", "--format", "jsonl"] + view)
                let after = try await workspace.aggregate(arguments: ["--stored", "--format", "jsonl"] + view + restored)
                #expect(after.status == 0)
                #expect(Self.ids(after) == Self.ids(before), "\(view)")
                #expect(!Self.ids(after).isEmpty)
            }
            #expect(try await workspace.aggregate(arguments: ["--stored", "--starred", "--format", "jsonl"] + restored).stdoutLines.count == 1)

            // A state already there is never overwritten; a file that is no backup is refused.
            let again = try await workspace.aggregate(arguments: ["restore", "state.tar"] + restored)
            #expect(again.status == 2)
            #expect(again.stderrLines == ["aggregate: restore: \(workspace.url.path)/restored already holds a state; move it away first (or restore into another --state-dir)"])
            try workspace.write("not-a-backup.tar", String(repeating: "x", count: 2000))
            let bad = try await workspace.aggregate("restore", "not-a-backup.tar", "--state-dir", "other")
            #expect(bad.status == 2)
            #expect(bad.stderrLines == ["aggregate: restore: not-a-backup.tar is not a backup of aggregate's state (no tar header where one should be)"])
            #expect(!FileManager.default.fileExists(atPath: workspace.url.appendingPathComponent("other/cards.sqlite").path))
        }
    }
}
