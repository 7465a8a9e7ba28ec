import FeedCore
import FeedSourceTesting
import FixtureCatalogue
import FixtureServer
import Foundation
import SourceCatalogue
import Testing

/// Large response bodies live in files beside `cache.sqlite` (`state/bodies/`), written
/// once instead of twice through SQLite's log (issue 14): served warm like any cached body,
/// a damaged file is a miss and is fetched again, and files no row names are swept.
@Suite(.serialized) struct BodyFileTests {
    /// The dishwasher grid replicated 20-fold: 1.4 MB, over the 1 MiB threshold.
    static func withLargeGrid(_ body: (FixtureServer, Workspace) async throws -> Void) async throws {
        let server = FixtureServer.standard(FixtureCatalogue.sources, scale: 20)
        try await server.withRunning { base in
            let entries = FixtureWorld.sources.filter { $0.id == "dishwashers" }
            let workspace = try Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, sources: entries))
            try await body(server, workspace)
        }
    }

    /// The files in `state/bodies/`, none when the folder was never made.
    static func bodyFiles(_ workspace: Workspace) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: workspace.url.appendingPathComponent("state/bodies").path)) ?? []).sorted()
    }

    @Test func aLargeBodyIsAFileServedWarmAndRefetchedWhenDamaged() async throws {
        try await Self.withLargeGrid { server, workspace in
            let gridRequests = { server.control.requests.filter { $0.path.hasSuffix("search-valid-response.json") }.count }
            let cold = try await workspace.run("--all", "--format", "jsonl")
            #expect(cold.status == 0)
            #expect(cold.stdoutLines.count == 400)
            let files = Self.bodyFiles(workspace)
            #expect(files.count == 1)
            let file = try #require(files.first)
            let path = workspace.url.appendingPathComponent("state/bodies/\(file)").path
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            #expect(size > 1 << 20)
            #expect(file.hasSuffix("-\(size)"))
            #expect(try await workspace.cacheSQL("SELECT length(body), body_file FROM http_cache JOIN http_body USING (key) WHERE body_file IS NOT NULL") == "0|\(file)\n")

            // Warm: the same cards, no request. Without its mapped pages, the run reads the file.
            _ = try await workspace.cacheSQL("DELETE FROM mapped_page")
            let warm = try await workspace.run("--all", "--format", "jsonl")
            #expect(warm.stdout == cold.stdout)
            #expect(gridRequests() == 1)

            // A file cut short (a crash before the disk had it all) is a miss: fetched again.
            _ = try await workspace.cacheSQL("DELETE FROM mapped_page")
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.truncate(atOffset: UInt64(size / 2))
            try handle.close()
            let damaged = try await workspace.run("--all", "--format", "jsonl")
            #expect(damaged.status == 0)
            #expect(damaged.stdout == cold.stdout)
            #expect(damaged.stderr == "")
            #expect(gridRequests() == 2)
            let replaced = Self.bodyFiles(workspace)
            #expect(replaced.count == 1 && replaced != files)
        }
    }

    /// A large body is written to its file as it arrives and read from there: also when
    /// it comes compressed, its length unknown until the end (kept in memory up to 1 MiB,
    /// then moved to the file). The file holds exactly the body: a warm run reads the same cards.
    @Test func aCompressedLargeBodyIsReceivedIntoItsFile() async throws {
        try await Self.withLargeGrid { server, workspace in
            let plain = try await workspace.run("--all", "--format", "jsonl")
            let plainFile = try #require(Self.bodyFiles(workspace).first)
            server.control.set("dishwasher", [Fault(gzip: true)])
            let compressed = try await workspace.run("--all", "--format", "jsonl", "--refresh")
            #expect(compressed.status == 0)
            #expect(compressed.stdout == plain.stdout)
            #expect(server.control.requests.last?.headers["accept-encoding"] == "gzip, deflate")
            let files = Self.bodyFiles(workspace)
            #expect(files.count == 1)
            let file = try #require(files.first)
            #expect(file != plainFile)
            #expect(file.split(separator: "-").last == plainFile.split(separator: "-").last)

            _ = try await workspace.cacheSQL("DELETE FROM mapped_page")
            let warm = try await workspace.run("--all", "--format", "jsonl")
            #expect(warm.stdout == plain.stdout)
            #expect(server.control.requests.count == 2)
        }
    }

    /// An error page large enough for a file, then a retry that succeeds: the page's file
    /// is removed, only the good body is kept.
    @Test func aLargeErrorPageLeavesNoFile() async throws {
        let faults = [Fault(status: 503, oversizeBytes: 2 * 1024 * 1024), .none]
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), faults: ["cabify": faults]) { session in
            let run = try await session.run("--format", "jsonl")
            #expect(run.status == 0)
            #expect(run.stdoutLines.count == 3)
            #expect(session.server.control.requests.map(\.status) == [503, 200])
            #expect(Self.bodyFiles(session.workspace) == [])
            #expect(try await session.workspace.cacheSQL("SELECT count(*) FROM http_cache") == "1\n")
        }
    }

    /// When no file can be made for a large body (here `bodies` is a file, not a folder),
    /// the body is kept in memory: the run prints every card, and the cache says once that
    /// it could not store it.
    @Test func aLargeBodyWithNowhereToGoIsKeptInMemory() async throws {
        try await Self.withLargeGrid { server, workspace in
            let state = workspace.url.appendingPathComponent("state")
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Data("not a folder".utf8).write(to: state.appendingPathComponent("bodies"))
            let run = try await workspace.run("--all", "--format", "jsonl")
            #expect(run.status == 0)
            #expect(run.stdoutLines.count == 400)
            #expect(run.stderrLines == [
                "aggregate: cache write failed: cannot store a large body in \(state.path)/bodies: Not a directory",
            ])
            #expect(server.control.requests.count == 1)
        }
    }

    /// A disk that fills in the middle of a large body (here a file size limit of 1,200
    /// KiB, `ulimit -f`, which binds root too) costs the cache its copy, never the
    /// response: the rest of the body is kept in memory, every card prints, the cache says
    /// once that it could not store the body, and no partial file is left behind. (A run
    /// over a small source makes the state first: migrating a new cache alone writes more
    /// than the limit to SQLite's log.)
    @Test func aDiskThatFillsMidBodyCostsTheCacheItsCopyNotTheResponse() async throws {
        let server = FixtureServer.standard(FixtureCatalogue.sources, scale: 20)
        try await server.withRunning { base in
            let workspace = try Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, sources: FixtureWorld.only("dishwashers")))
            try workspace.write("Small.yml", FixtureWorld.sourcesYml(base: base, sources: FixtureWorld.only("cabify")))
            #expect(try await workspace.run("--config", "Small.yml").status == 0)

            let limited = try await Binary.aggregate.run(
                ["-c", "trap '' XFSZ; ulimit -f 1200; exec \"$0\" \"$@\"", Binary.aggregate.url.path,
                 "--all", "--format", "jsonl"] + Workspace.stateArguments,
                in: workspace.url, absolute: "/bin/bash")
            #expect(limited.status == 0)
            #expect(limited.stderrLines == [
                "aggregate: cache write failed: cannot store a large body in \(workspace.url.path)/state/bodies: File too large",
            ])
            #expect(limited.stdoutLines.count == 400)
            #expect(Self.bodyFiles(workspace) == [])

            let unlimited = try await workspace.run("--all", "--format", "jsonl", "--refresh")
            #expect(unlimited.stdout == limited.stdout)
            #expect(server.control.requests.filter { $0.path.hasSuffix("search-valid-response.json") }.count == 2)
        }
    }

    @Test func filesNoRowNamesAreSweptOnceOld() async throws {
        try await Self.withLargeGrid { _, workspace in
            #expect(try await workspace.run("--all", "--format", "jsonl").status == 0)
            let bodies = workspace.url.appendingPathComponent("state/bodies")
            let old = bodies.appendingPathComponent("00000000-0000-0000-0000-000000000000-5")
            let recent = bodies.appendingPathComponent("11111111-1111-1111-1111-111111111111-5")
            try Data("stale".utf8).write(to: old)
            try Data("fresh".utf8).write(to: recent)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: old.path)
            // --refresh stores the body again: the new file replaces the old one, and the sweep
            // removes the hour-old orphan but not the one a writer may be about to name.
            #expect(try await workspace.run("--all", "--format", "jsonl", "--refresh").status == 0)
            let files = Self.bodyFiles(workspace)
            #expect(files.count == 2)
            #expect(files.contains(recent.lastPathComponent))
            #expect(!files.contains(old.lastPathComponent))
        }
    }

    /// A large body is written to a file as it arrives; when the source cannot read it, the
    /// file is removed and nothing is stored.
    @Test func aLargeBodyTheSourceCannotReadLeavesNoFile() async throws {
        let big = [Fault(oversizeBytes: 2 * 1024 * 1024)]
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), faults: ["cabify": big]) { session in
            let run = try await session.run("--format", "jsonl")
            #expect(run.status == 1)
            #expect(run.stderrLines.first?.hasPrefix("cabify: unreadable response: the body is not JSON (2097152 bytes) (") == true)
            #expect(Self.bodyFiles(session.workspace) == [])
            #expect(try await session.workspace.cacheSQL("SELECT count(*) FROM http_cache") == "0\n")
        }
    }
}
