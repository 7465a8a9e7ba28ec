import FeedCore
import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// A damaged state directory (issue 15, defects 7 and 9): the cache repairs itself,
/// the digests' memory is never silently replaced, and every file is private.
@Suite(.serialized) struct StateDamageTests {
    static let cabify = FixtureWorld.only("cabify")

    /// Overwrites a database with `text` and drops its WAL: a WAL left by the last run
    /// can hold page 1, and SQLite would read the database from it and never see the damage.
    func write(_ text: String, to name: String, in workspace: Workspace) throws {
        let path = workspace.url.appendingPathComponent("state/\(name)").path
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func aGarbageCacheIsMovedAsideAndTheRunSucceeds() async throws {
        try await FixtureWorld.withSession(sources: Self.cabify) { session in
            #expect(try await session.run().status == 0)
            try write(String(repeating: "garbage ", count: 1000), to: "cache.sqlite", in: session.workspace)
            let run = try await session.run()
            #expect(run.status == 0)
            #expect(run.stdoutLines.count == 3)
            #expect(run.stderrLines.count == 1)
            #expect(run.stderrLines.first?.contains("/state/cache.sqlite was damaged (") == true)
            #expect(run.stderrLines.first?.contains("; moved it to ") == true)
            let files = try FileManager.default.contentsOfDirectory(atPath: session.workspace.url.appendingPathComponent("state").path)
            #expect(files.contains { $0.hasPrefix("cache.sqlite.corrupt-") })
            #expect(try await session.run().stderr == "")
        }
    }

    @Test func aGarbageDigestStateIsRefusedWithHowToRecover() async throws {
        try await FixtureWorld.withSession(sources: Self.cabify) { session in
            #expect(try await session.run("digest", "--name", "daily").status == 0)
            try write(String(repeating: "garbage ", count: 1000), to: "state.sqlite", in: session.workspace)
            let run = try await session.run("digest", "--name", "daily")
            #expect(run.status == 1)
            #expect(run.stdout == "")
            let path = session.workspace.url.appendingPathComponent("state/state.sqlite").path
            #expect(run.stderrLines.last?.contains("\(path) is damaged (") == true)
            #expect(run.stderrLines.last?.contains("restore it from a backup, or move it aside (mv \(path) \(path).bak)") == true)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes == Data(String(repeating: "garbage ", count: 1000).utf8))
        }
    }

    @Test func stateIsPrivate() async throws {
        try await FixtureWorld.withSession(sources: Self.cabify) { session in
            #expect(try await session.run("digest", "--name", "daily").status == 0)
            let state = session.workspace.url.appendingPathComponent("state")
            let manager = FileManager.default
            #expect(try manager.attributesOfItem(atPath: state.path)[.posixPermissions] as? Int == 0o700)
            for name in try manager.contentsOfDirectory(atPath: state.path) {
                let mode = try manager.attributesOfItem(atPath: state.appendingPathComponent(name).path)[.posixPermissions] as? Int
                #expect(mode == 0o600, "\(name) is \(String(mode ?? 0, radix: 8))")
            }
        }
    }

    /// Values of the wrong type in the digests' table are damage, said with how to recover,
    /// never a crash (issue 28, defect 9); in the cache they are a miss, fetched again.
    @Test func wrongTypedStateValuesAreDamageAndWrongTypedCacheValuesAMiss() async throws {
        try await FixtureWorld.withSession(sources: Self.cabify) { session in
            #expect(try await session.run("digest", "--name", "daily").status == 0)
            let state = session.workspace.url.appendingPathComponent("state/state.sqlite").path
            let sql = try await Binary(name: "sqlite3").run([state, "UPDATE digest_item SET first_seen = 'yesterday'"],
                                                          in: session.workspace.url, absolute: "/usr/bin/sqlite3")
            #expect(sql.status == 0, "\(sql.stderr)")
            let run = try await session.run("digest", "--name", "daily")
            #expect(run.status == 1)
            #expect(run.stdout == "")
            #expect(run.stderrLines.last?.hasPrefix("aggregate: digest 'daily' failed: \(state) is damaged (a row of digest daily cannot be read: "
                + "could not decode Double from database value \"yesterday\" - column: \"first_seen\"") == true, "\(run.stderr)")
            #expect(run.stderrLines.last?.hasSuffix("restore it from a backup, or move it aside (mv \(state) \(state).bak) and the next digest run "
                + "records a fresh baseline; nothing was committed") == true)

            session.clearLog()
            _ = try await session.workspace.cacheSQL("UPDATE http_cache SET status = 'ok', fetched_at = 'now'")
            let feed = try await session.run("--format", "jsonl")
            #expect(feed.status == 0)
            #expect(feed.stdoutLines.count == 3)
            #expect(session.requests.count == 1)
        }
    }

    /// A value of the wrong type in a card's row is the card store's damage, said with how
    /// to recover, never a trap (issue 60): for the command line's reads and marks alike.
    @Test func wrongTypedCardValuesAreDamageNotACrash() async throws {
        try await FixtureWorld.withSession(sources: Self.cabify) { session in
            #expect(try await session.run("refresh").status == 0)
            #expect(try await session.run("mark", "read", "cabify:MUG").status == 0)
            let cards = session.workspace.url.appendingPathComponent("state/cards.sqlite").path
            let kept = try Data(contentsOf: URL(fileURLWithPath: cards))
            let mutations = [("card", "first_seen", "'abc'"), ("card", "gone_since", "'never'"), ("card", "last_seen", "x'00ff'"),
                             ("card", "position", "'first'"), ("card_reading", "read_at", "'x'")]
            for (table, column, value) in mutations {
                try kept.write(to: URL(fileURLWithPath: cards))
                let sql = try await Binary(name: "sqlite3").run([cards, "UPDATE \(table) SET \(column) = \(value) WHERE id = 'cabify:MUG'"],
                                                              in: session.workspace.url, absolute: "/usr/bin/sqlite3")
                #expect(sql.status == 0, "\(sql.stderr)")
                for arguments in [["--stored", "--all"], ["--stored", "--page", "1", "--sort", "date"], ["history", "cabify:MUG"]] {
                    let run = try await session.workspace.run(arguments: arguments)
                    #expect(run.status == 1, "\(column) \(arguments): \(run.status) \(run.stderr)")
                    #expect(run.stderr.contains("\(cards) is damaged (a card's \(column) is not a number)"), "\(column) \(arguments): \(run.stderr)")
                }
            }
        }
    }

    /// A card store that cannot be written (a full disk, played by triggers that abort
    /// every write) fails the refresh, once said, so that cron hears of it (issue 61).
    @Test func aRefreshThatCannotRecordFails() async throws {
        try await FixtureWorld.withSession(sources: Self.cabify) { session in
            #expect(try await session.run("refresh").status == 0)
            let cards = session.workspace.url.appendingPathComponent("state/cards.sqlite").path
            let full = ["card", "card_source_version"].flatMap { table in
                ["INSERT", "UPDATE"].map { "CREATE TRIGGER full_\(table)_\($0.lowercased()) BEFORE \($0) ON \(table) BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;" }
            }.joined(separator: " ")
            let sql = try await Binary(name: "sqlite3").run([cards, full], in: session.workspace.url, absolute: "/usr/bin/sqlite3")
            #expect(sql.status == 0, "\(sql.stderr)")
            let run = try await session.run("refresh")
            #expect(run.status == 1, "\(run.stderr)")
            let said = run.stderrLines.filter { $0.contains("cannot record the cards in the card store") }
            #expect(said.count == 1, "\(run.stderr)")
            #expect(said.first?.hasSuffix("; the refresh records nothing more, and fails") == true, "\(run.stderr)")
            #expect(said.first?.contains("database or disk is full") == true, "\(run.stderr)")
        }
    }

    /// Every stored copy damaged at once, bodies and remembered pages, within the TTL: each
    /// page is fetched again in the same run, not failed (issue 28, defect 10).
    @Test func damagedBodiesAndPagesAreFetchedAgainInTheSameRun() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("ltk")) { session in
            let first = try await session.run("--format", "jsonl", "--per-page", "100")
            #expect(first.status == 0)
            let pages = session.requests.count
            #expect(pages > 1)
            // Same lengths, other bytes: nothing but reading them can tell.
            _ = try await session.workspace.cacheSQL("""
                UPDATE http_body SET body = zeroblob(length(body)); UPDATE mapped_page_body SET page = zeroblob(length(page));
                """)
            session.clearLog()
            let again = try await session.run("--format", "jsonl", "--per-page", "100")
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout == first.stdout)
            #expect(again.stderr == "")
            #expect(session.requests.count == pages)
            // And the copies stored now are good: the next run asks nothing.
            session.clearLog()
            #expect(try await session.run("--format", "jsonl", "--per-page", "100").stdout == first.stdout)
            #expect(session.requests.count == 0)
        }
    }

    /// A cache whose table was dropped, or a directory where the cache file goes, is moved
    /// aside and rebuilt; a digest is not blocked by it (issue 28, defect 10).
    @Test func aCacheMissingATableOrNotAFileIsRebuilt() async throws {
        try await FixtureWorld.withSession(sources: Self.cabify) { session in
            #expect(try await session.run().status == 0)
            _ = try await session.workspace.cacheSQL("DROP TABLE http_cache")
            let dropped = try await session.run("--format", "jsonl")
            #expect(dropped.status == 0)
            #expect(dropped.stdoutLines.count == 3)
            let cache = session.workspace.url.appendingPathComponent("state/cache.sqlite").path
            #expect(dropped.stderrLines.count == 1)
            #expect(dropped.stderrLines.first?.hasPrefix("aggregate: the cache \(cache) was damaged (its table http_cache is missing); moved it to \(cache).corrupt-") == true,
                    "\(dropped.stderr)")
            session.clearLog()
            let quiet = try await session.run("--format", "jsonl")
            #expect(quiet.stderr == "" && quiet.stdout == dropped.stdout)
            #expect(session.requests.count == 0)

            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cache + suffix) }
            try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: false)
            let digest = try await session.run("digest", "--name", "daily")
            #expect(digest.status == 0, "\(digest.stderr)")
            #expect(digest.stderrLines.first?.hasPrefix("aggregate: the cache \(cache) was damaged (a directory stands where the database file goes); moved it to ") == true,
                    "\(digest.stderr)")
            var isDirectory: ObjCBool = true
            #expect(FileManager.default.fileExists(atPath: cache, isDirectory: &isDirectory) && !isDirectory.boolValue)
        }
    }

    /// A state folder that exists keeps its mode (a shared, sticky folder is the user's)
    /// and gets one warning when others can read it; a symlinked `state.sqlite` stays a
    /// link and its target keeps its mode (issue 28, defect 6).
    @Test func anExistingFolderAndALinkedFileKeepTheirModes() async throws {
        try await FixtureWorld.withSession(sources: Self.cabify) { session in
            let manager = FileManager.default
            let shared = session.workspace.url.appendingPathComponent("shared")
            try manager.createDirectory(at: shared, withIntermediateDirectories: false)
            try manager.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: shared.path)
            let target = session.workspace.url.appendingPathComponent("elsewhere.sqlite")
            #expect(manager.createFile(atPath: target.path, contents: nil, attributes: [.posixPermissions: 0o644]))
            try manager.createSymbolicLink(atPath: shared.appendingPathComponent("state.sqlite").path, withDestinationPath: target.path)
            let run = try await Binary.aggregate.run(["digest", "--name", "daily", "--state-dir", shared.path], in: session.workspace.url)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stderrLines.first == "aggregate: warning: \(shared.path) can be read by other users (mode 1777); "
                + "the cache may hold responses fetched with your keys: choose a private --state-dir, or chmod 700 it")
            #expect(try manager.attributesOfItem(atPath: shared.path)[.posixPermissions] as? Int == 0o1777)
            #expect(try manager.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int == 0o644)
            #expect(try manager.destinationOfSymbolicLink(atPath: shared.appendingPathComponent("state.sqlite").path) == target.path)
            // What this run made is private.
            #expect(try manager.attributesOfItem(atPath: shared.appendingPathComponent("cache.sqlite").path)[.posixPermissions] as? Int == 0o600)
        }
    }

    @Test func aLockPathThatIsADirectoryIsSaidPlainly() async throws {
        try await FixtureWorld.withSession(sources: Self.cabify) { session in
            try FileManager.default.createDirectory(at: session.workspace.url.appendingPathComponent("state/digest-daily.lock"),
                                                    withIntermediateDirectories: true)
            let run = try await session.run("digest", "--name", "daily")
            #expect(run.status == 1)
            #expect(run.stderrLines.last?.hasSuffix("digest-daily.lock: it is a directory; remove it or choose another --state-dir; nothing was committed") == true)
        }
    }
}

/// A newcomer's first offline digest says what happened and what to do (issue 15, 12).
@Suite struct OfflineDigestAdviceTests {
    @Test func anOfflineDigestSaysToRunAgainWithTheNetwork() async throws {
        let workspace = try Workspace(sourcesYml: try Workspace.shippedSourcesYml)
        let run = try await workspace.run("digest", "--name", "daily", "--offline")
        #expect(run.status == 3)
        #expect(run.stdout == "")
        #expect(run.stderrLines.last == "digest 'daily': no source could be checked, so nothing was compared and no baseline was recorded; run it again with the network (recorded snapshots are never news)")
    }
}

/// System errors are said in plain words, never as an NSError dump (issue 15, 11).
@Suite struct PlainErrorTests {
    @Test func aStateDirectoryThatCannotBeMadeIsSaidPlainly() async throws {
        let workspace = try Workspace(sourcesYml: """
            sources:
              - id: shop
                plugin: cabify
                url: https://gist.githubusercontent.com/palcalde/6c19259bd32dd6aafa327fa557859c2f/raw/ba51779474a150ee4367cda4f4ffacdcca479887/Products.json

            """)
        let run = try await workspace.aggregate("--offline", "--state-dir", "/dev/null/state")
        #expect(run.status == 0)
        #expect(run.stdoutLines.count == 3)
        #expect(run.stderrLines == ["aggregate: running without a cache: cannot open the state in /dev/null/state (cannot be written (check that every parent is a directory you may write to))"])
    }
}
