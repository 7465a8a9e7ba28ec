import Foundation
import XCTest

/// `swift package new-source` in a copy of this package: every paging style, then the
/// copy builds, the new modules pass their own tests (conformance included) and print
/// their example cards offline. XCTest, so it runs apart from the parallel Swift Testing
/// suites: it builds a whole package. The copy and its build folder live under
/// `.build/scaffold-check/` at stable paths, so a second run builds incrementally.
final class ScaffoldTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let styles = [("ListExample", "none"), ("PagedExample", "page"), ("OffsetExample", "offset"), ("CursorExample", "cursor")]

    func testTheScaffoldMakesWorkingSourcesInEveryPagingStyle() throws {
        let work = Self.root.appendingPathComponent(".build/scaffold-check")
        let copy = work.appendingPathComponent("package")
        let scratch = ["--scratch-path", work.appendingPathComponent("build").path]
        try copyPackage(to: copy)

        for (name, paging) in Self.styles {
            let made = try run(["swift", "package"] + scratch + ["--allow-writing-to-package-directory", "new-source", name, "--paging", paging], in: copy)
            XCTAssertEqual(made.status, 0, made.output)
            XCTAssertTrue(made.output.contains("Created Plugins/\(name)/ (\(paging) paging)"), made.output)
        }
        // Touch points outside the new folders: the catalogue, Sources.yml, README.md, and
        // Package.swift's stamp line (so SwiftPM's manifest cache sees the folders).
        let changed = try run(["git", "status", "--porcelain"], in: copy).output.split(separator: "\n").map { String($0.dropFirst(3)) }
        XCTAssertEqual(Set(changed), Set(["Package.swift", "README.md", "Sources.yml", "Sources/SourceCatalogue/SourceCatalogue.swift"]
            + Self.styles.map { "Plugins/\($0.0)/" }))

        let stamp = try String(contentsOf: copy.appendingPathComponent("Package.swift"), encoding: .utf8)
        XCTAssertTrue(stamp.contains("// Source folders: Cabify(1) CursorExample(2) Dishwashers(3) LTK(4) ListExample(1) OffsetExample(2) PagedExample(2) Reqres(4) TargetDeals(2)\n"))

        let build = try run(["swift", "build"] + scratch + ["--build-tests"], in: copy)
        XCTAssertEqual(build.status, 0, String(build.output.suffix(4000)))
        guard build.status == 0 else { return }
        let tests = try run(["swift", "test"] + scratch + ["--skip-build", "--filter", Self.styles.map { "\($0.0)Tests" }.joined(separator: "|")], in: copy)
        XCTAssertEqual(tests.status, 0, String(tests.output.suffix(4000)))
        XCTAssertTrue(tests.output.contains("conformance()"), tests.output)

        let binary = work.appendingPathComponent("build/debug/aggregate").path
        for (name, _) in Self.styles {
            let id = name.lowercased()
            let cards = try run([binary, "--source", id, "--offline", "--format", "jsonl", "--state-dir", work.appendingPathComponent("state").path], in: copy)
            XCTAssertEqual(cards.status, 0, cards.output)
            let ids = cards.stdout.split(separator: "\n").compactMap { line -> String? in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
            }
            XCTAssertEqual(ids, (1...5).map { "\(id):\($0)" }, cards.output)
        }
    }

    /// The files git would commit (tracked and new, not ignored), as in a fresh clone.
    func copyPackage(to copy: URL) throws {
        let files = FileManager.default
        try? files.removeItem(at: copy)
        try files.createDirectory(at: copy, withIntermediateDirectories: true)
        let listed = try run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], in: Self.root)
        for path in listed.stdout.split(separator: "\n").map(String.init) {
            let source = Self.root.appendingPathComponent(path)
            guard files.fileExists(atPath: source.path) else { continue }
            let target = copy.appendingPathComponent(path)
            try files.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try files.copyItem(at: source, to: target)
        }
        for command in [["git", "init", "-q"], ["git", "add", "-A"],
                        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy"]] {
            XCTAssertEqual(try run(command, in: copy).status, 0)
        }
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var output: String { stdout + stderr }
    }

    func run(_ arguments: [String], in directory: URL) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("scaffold-\(UUID().uuidString).out")
        let err = FileManager.default.temporaryDirectory.appendingPathComponent("scaffold-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
                      stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }
}
