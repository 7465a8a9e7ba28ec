import FeedCore
import FeedSourceTesting
import FixtureServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `aggregate record`: live responses into snapshot files, with the lines to paste.
@Suite struct RecordTests {
    @Test func recordsEveryPageAndADetailWithTheURLsTheSourceAsks() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("users")) { session in
            let run = try await session.run("record", "users", "--into", "snaps", "--pages", "5", "--detail", "2", "--detail", "99")
            #expect(run.status == 0)
            let base = "\(session.base.absoluteString)/reqres/api/users"
            #expect(run.stdoutLines == [
                #"RecordedResponse(url: "\#(base)?page=1", bytes: PackageResources.users_page_1_json),"#,
                #"RecordedResponse(url: "\#(base)?page=2", bytes: PackageResources.users_page_2_json),"#,
                #"RecordedResponse(url: "\#(base)/2", bytes: PackageResources.users_2_json),"#,
                #"RecordedResponse(url: "\#(base)/99", status: 404, bytes: PackageResources.users_99_404_json),"#,
            ])
            #expect(session.requests.map(\.status) == [200, 200, 200, 404])
            let folder = session.workspace.url.appendingPathComponent("snaps")
            let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            #expect(files == ["users_2.json", "users_99_404.json", "users_page-1.json", "users_page-2.json"])
            let page1 = try Data(contentsOf: folder.appendingPathComponent("users_page-1.json"))
            let served = try await URLSession.shared.data(from: try #require(URL(string: "\(base)?page=1"))).0
            #expect(page1 == served)
        }
    }

    /// The shipped binary never edits the package: recording into a module's Snapshots/
    /// writes the files and nothing else (Package.swift compiles the folder in, so the next
    /// build picks them up).
    @Test func recordingIntoAModuleFolderLeavesTheManifestAlone() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("users")) { session in
            let manifest = "// swift-tools-version:6.1\n// a manifest nothing may rewrite\n"
            try session.workspace.write("Package.swift", manifest)
            let run = try await session.run("record", "users", "--into", "Plugins/Users/Snapshots", "--pages", "2")
            #expect(run.status == 0)
            #expect(try String(contentsOf: session.workspace.url.appendingPathComponent("Package.swift"), encoding: .utf8) == manifest)
            let files = try FileManager.default.contentsOfDirectory(atPath: session.workspace.url.appendingPathComponent("Plugins/Users/Snapshots").path)
            #expect(files.sorted() == ["users_page-1.json", "users_page-2.json"])
            #expect(!run.stderrLines.contains { $0.contains("Package.swift") })
        }
    }

    @Test func anUnknownSourceIsAUsageError() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("users")) { session in
            let run = try await session.run("record", "nope", "--into", "snaps")
            #expect(run.status == 2)
            #expect(run.stderrLines == [#"aggregate: unknown source "nope" in Sources.yml (known: users)"#])
            #expect(session.requests.isEmpty)
        }
    }
}
