import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// What `digest --output PATH` may do to PATH (issue 28, defects 1 and 3), with device
/// nodes, FIFOs and links made inside the test's own directory, never the system's: a
/// device or pipe is written to, a link is followed, neither is ever replaced; a
/// directory is refused before anything is committed; a report committed for a path that
/// became impossible is delivered elsewhere instead of blocking the digest.
@Suite(.serialized) struct DigestOutputTargetTests {
    static let hoodie = DataEdit.add(list: "products", item: ["code": "HOODIE", "name": "Cabify Hoodie", "price": 30])

    /// A workspace with the cabify source and the digest "daily" baselined.
    /// The hoodie is added upstream before `body` runs, and a dry run shows it is news.
    func withBaseline(_ body: (FixtureServer, Workspace) async throws -> Void) async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            #expect(try await session.run("digest", "--name", "daily").status == 0)
            session.server.control.edit("cabify", Self.hoodie)
            let dry = try await session.run("digest", "--name", "daily", "--dry-run", "--refresh")
            #expect(dry.stdout.contains("Cabify Hoodie"), "\(dry.stdout) \(dry.stderr)")
            try await body(session.server, session.workspace)
        }
    }

    func shell(_ command: String, in workspace: Workspace) async throws {
        let run = try await Binary(name: "sh").run(["-c", command], in: workspace.url, absolute: "/bin/sh")
        #expect(run.status == 0, "\(command): \(run.stderr)")
    }

    /// What a run killed between its commit and its write leaves: a report owed to the
    /// file target of `path`, in the outbox of the digest "daily".
    func owe(_ text: String, to path: String, in workspace: Workspace) async throws {
        let payload = "{\"body\":\(String(decoding: try JSONEncoder().encode(text), as: UTF8.self)),\"headers\":{}}"
        let insert = try await Binary(name: "sqlite3").run([
            workspace.url.appendingPathComponent("state/state.sqlite").path,
            "INSERT INTO digest_outbox (digest, target, report_id, created, payload) VALUES ('daily', 'file \(path)', 'r1', 0, '\(payload)')",
        ], in: workspace.url, absolute: "/usr/bin/sqlite3")
        #expect(insert.status == 0, "\(insert.stderr)")
    }

    func type(_ path: URL) -> FileAttributeType? {
        (try? FileManager.default.attributesOfItem(atPath: path.path))?[.type] as? FileAttributeType
    }

    /// Temporary files that killed runs left beside the report are swept by the next run;
    /// one of a process still running is left alone (issue 28, defect 12).
    @Test func leftoversOfKilledRunsAreSwept() async throws {
        try await withBaseline { _, workspace in
            let dead = workspace.url.appendingPathComponent(".report.txt.4194303.tmp")
            let alive = workspace.url.appendingPathComponent(".report.txt.\(ProcessInfo.processInfo.processIdentifier).tmp")
            for file in [dead, alive] { try Data("half a report".utf8).write(to: file) }
            let run = try await workspace.run("digest", "--name", "daily", "--output", "report.txt", "--refresh")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try String(contentsOf: workspace.url.appendingPathComponent("report.txt"), encoding: .utf8).contains("Cabify Hoodie"))
            #expect(!FileManager.default.fileExists(atPath: dead.path))
            #expect(FileManager.default.fileExists(atPath: alive.path))
        }
    }

    @Test func aCharacterDeviceIsWrittenToNotReplaced() async throws {
        try await withBaseline { server, workspace in
            try await shell("mknod null c 1 3 && chmod 666 null", in: workspace)
            let run = try await workspace.run("digest", "--name", "daily", "--output", "null", "--refresh")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(type(workspace.url.appendingPathComponent("null")) == .typeCharacterSpecial)
            // Delivered (to the device), so the change is not reported again.
            let again = try await workspace.run("digest", "--name", "daily", "--refresh")
            #expect(again.status == 0 && again.stdout == "", "\(again.stdout)")
        }
    }

    @Test func aFIFOIsWrittenToNotReplaced() async throws {
        try await withBaseline { server, workspace in
            try await shell("mkfifo pipe", in: workspace)
            let reader = Task { try await Binary(name: "sh").run(["-c", "timeout 20 cat pipe > got.md"], in: workspace.url, absolute: "/bin/sh") }
            let run = try await workspace.run("digest", "--name", "daily", "--output", "pipe", "--refresh")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try await reader.value.status == 0)
            #expect(type(workspace.url.appendingPathComponent("pipe")) != .typeRegular)
            let got = try String(contentsOf: workspace.url.appendingPathComponent("got.md"), encoding: .utf8)
            #expect(got.contains("- **New:** Cabify Hoodie — €30.00"), "\(got)")
        }
    }

    @Test func aSymlinkIsFollowedNotReplaced() async throws {
        try await withBaseline { server, workspace in
            try workspace.write("real.md", "old\n")
            try FileManager.default.createSymbolicLink(atPath: workspace.url.appendingPathComponent("link.md").path,
                                                       withDestinationPath: "real.md")
            let run = try await workspace.run("digest", "--name", "daily", "--output", "link.md", "--refresh")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: workspace.url.appendingPathComponent("link.md").path) == "real.md")
            let real = try String(contentsOf: workspace.url.appendingPathComponent("real.md"), encoding: .utf8)
            #expect(real.contains("Cabify Hoodie"))
        }
    }

    @Test func aDirectoryIsRefusedBeforeAnythingIsCommitted() async throws {
        try await withBaseline { server, workspace in
            try FileManager.default.createDirectory(at: workspace.url.appendingPathComponent("reports"), withIntermediateDirectories: false)
            let refused = try await workspace.run("digest", "--name", "daily", "--output", "reports", "--refresh")
            #expect(refused.status == 1)
            #expect(refused.stderrLines == ["aggregate: cannot write reports: it is a directory; give a file path, such as reports/digest.md"])
            // Nothing is stuck: the next run with a good path reports the change.
            let good = try await workspace.run("digest", "--name", "daily", "--output", "reports/digest.md", "--refresh")
            #expect(good.status == 0, "\(good.stderr)")
            #expect(try String(contentsOf: workspace.url.appendingPathComponent("reports/digest.md"), encoding: .utf8).contains("Cabify Hoodie"))
        }
    }

    /// A report committed for a path that has since become a directory is delivered to
    /// this run's output (here stdout) once, with a line saying so; the digest goes on.
    @Test func aPendingReportWhosePathBecameImpossibleGoesToThisRunsOutput() async throws {
        try await withBaseline { _, workspace in
            try FileManager.default.createDirectory(at: workspace.url.appendingPathComponent("gone.md"), withIntermediateDirectories: false)
            try await owe("the earlier report\n", to: "gone.md", in: workspace)
            let same = try await workspace.run("digest", "--name", "daily", "--output", "gone.md")
            #expect(same.status == 1)
            #expect(same.stderrLines.last == "aggregate: cannot write gone.md: it is a directory; give a file path, such as gone.md/digest.md; "
                + "the report an earlier run committed for gone.md waits for it: fix that path, or run again with another --output (or none, to print it)",
                    "\(same.stderr)")
            let printed = try await workspace.run("digest", "--name", "daily")
            #expect(printed.status == 0)
            #expect(printed.stdout == "the earlier report\n")
            #expect(printed.stderrLines == ["digest 'daily': delivered to stdout what the interrupted previous run had committed (it could not go to gone.md); new changes come with the next run"])
            // The digest goes on: the next run reports what changed since.
            let next = try await workspace.run("digest", "--name", "daily", "--refresh")
            #expect(next.status == 0 && next.stderr == "")
            #expect(next.stdout.contains("- **New:** Cabify Hoodie — €30.00"), "\(next.stdout)")
        }
    }

    /// `--output` is a `file` target: a report an interrupted run owed to a.md goes to
    /// a.md, alone, when the next run names b.md; b.md gets the changes after it.
    @Test func aReportOwedToOneFileGoesThereWhenTheNextRunNamesAnother() async throws {
        try await withBaseline { _, workspace in
            try await owe("the earlier report\n", to: "a.md", in: workspace)
            let run = try await workspace.run("digest", "--name", "daily", "--output", "b.md")
            #expect(run.status == 0 && run.stdout == "")
            #expect(run.stderrLines == ["digest 'daily': delivered to a.md what the interrupted previous run had committed; new changes come with the next run"])
            #expect(try String(contentsOf: workspace.url.appendingPathComponent("a.md"), encoding: .utf8) == "the earlier report\n")
            #expect(!FileManager.default.fileExists(atPath: workspace.url.appendingPathComponent("b.md").path))
            let next = try await workspace.run("digest", "--name", "daily", "--output", "b.md", "--refresh")
            #expect(next.status == 0 && next.stderr == "", "\(next.stderr)")
            #expect(try String(contentsOf: workspace.url.appendingPathComponent("b.md"), encoding: .utf8).contains("- **New:** Cabify Hoodie — €30.00"))
            #expect(try String(contentsOf: workspace.url.appendingPathComponent("a.md"), encoding: .utf8) == "the earlier report\n")
        }
    }
}
