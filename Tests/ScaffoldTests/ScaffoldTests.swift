import Foundation
import FeedSourceTesting
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

    func testTheScaffoldMakesWorkingSourcesInEveryPagingStyle() async throws {
        let work = Self.root.appendingPathComponent(".build/scaffold-check")
        let copy = work.appendingPathComponent("package")
        let scratch = ["--scratch-path", work.appendingPathComponent("build").path]
        say("copying the package to \(copy.path) and scaffolding a source in each paging style")
        try await copyPackage(to: copy)

        for (name, paging) in Self.styles {
            let made = try await run(["swift", "package"] + scratch + ["--allow-writing-to-package-directory", "new-source", name, "--paging", paging], in: copy)
            XCTAssertEqual(made.status, 0, (made.stdout + made.stderr))
            XCTAssertTrue((made.stdout + made.stderr).contains("Created Plugins/\(name)/ (\(paging) paging)"), (made.stdout + made.stderr))
        }
        // Touch points outside the new folders: one line each in Package.swift's module
        // list, the catalogue's import and entry, the fixture catalogue's import, and
        // Sources.yml's entry. Nothing else.
        let changed = try await run(["git", "status", "--porcelain"], in: copy).stdout.split(separator: "\n").map { String($0.dropFirst(3)) }
        XCTAssertEqual(Set(changed), Set(["Package.swift", "Sources.yml", "Sources/SourceCatalogue/SourceCatalogue.swift",
                                           "Sources/FixtureCatalogue/FixtureCatalogue.swift"]
            + Self.styles.map { "Plugins/\($0.0)/" }))
        let manifest = try await run(["git", "diff", "--unified=0", "Package.swift"], in: copy).stdout
        let added = manifest.split(separator: "\n").filter { $0.hasPrefix("+") && !$0.hasPrefix("+++") }
        let removed = manifest.split(separator: "\n").filter { $0.hasPrefix("-") && !$0.hasPrefix("---") }
        XCTAssertEqual(added.sorted(), Self.styles.map { "+    SourceModule(\"\($0.0)\")," }.sorted().map { Substring($0) }, manifest)
        XCTAssertEqual(removed, [], manifest)
        for (name, _) in Self.styles {
            let readme = try String(contentsOf: copy.appendingPathComponent("Plugins/\(name)/README.md"), encoding: .utf8)
            XCTAssertTrue(readme.hasPrefix("# Source: `\(name.lowercased())`"), readme)
        }

        say("building the copy with its four new sources (\(work.appendingPathComponent("build").path)); on 2 cores a first build takes about 8 minutes, a later one less")
        let build = try await run(["swift", "build"] + scratch + ["--build-tests"], in: copy)
        XCTAssertEqual(build.status, 0, String((build.stdout + build.stderr).suffix(4000)))
        guard build.status == 0 else { return }
        say("running the new sources' tests in the copy")
        let tests = try await run(["swift", "test"] + scratch + ["--skip-build", "--filter", Self.styles.map { "\($0.0)Tests" }.joined(separator: "|")], in: copy)
        XCTAssertEqual(tests.status, 0, String((tests.stdout + tests.stderr).suffix(4000)))
        XCTAssertTrue((tests.stdout + tests.stderr).contains("conformance()"), (tests.stdout + tests.stderr))

        let binary = work.appendingPathComponent("build/debug/aggregate").path
        for (name, _) in Self.styles {
            let id = name.lowercased()
            let cards = try await run([binary, "--source", id, "--offline", "--format", "jsonl", "--state-dir", work.appendingPathComponent("state").path], in: copy)
            XCTAssertEqual(cards.status, 0, (cards.stdout + cards.stderr))
            let ids = cards.stdout.split(separator: "\n").compactMap { line -> String? in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
            }
            XCTAssertEqual(ids, (1...5).map { "\(id):\($0)" }, (cards.stdout + cards.stderr))
        }
    }

    /// Examples/QuotesAggregate, an out-of-tree package that depends on this one by path and
    /// adds one source, builds (in the same build folder as the copy, so the packages both
    /// need are compiled once) and runs its source beside a built-in one.
    func testAnOutOfTreePackageBuildsAggregateWithItsOwnSource() async throws {
        let work = Self.root.appendingPathComponent(".build/scaffold-check")
        let copy = work.appendingPathComponent("example")
        try await copyPackage(to: copy)
        let example = copy.appendingPathComponent("Examples/QuotesAggregate")
        say("building Examples/QuotesAggregate against a copy of this package (\(work.appendingPathComponent("build").path))")
        let build = try await run(["swift", "build", "--scratch-path", work.appendingPathComponent("build").path, "--product", "my-aggregate"],
                                  in: example)
        XCTAssertEqual(build.status, 0, String((build.stdout + build.stderr).suffix(4000)))
        guard build.status == 0 else { return }
        let binary = work.appendingPathComponent("build/debug/my-aggregate").path
        let state = ["--state-dir", work.appendingPathComponent("example-state").path]
        let quotes = try await run([binary, "--offline", "--all", "--source", "quotes", "--format", "jsonl"] + state, in: example)
        XCTAssertEqual(quotes.status, 0, quotes.stderr)
        XCTAssertEqual(quotes.stdout.split(separator: "\n").first, #"{"author":{"name":"Rumi"},"id":"quotes:1","kind":"post","origin":"snapshot","source":"quotes","tags":[],"title":"Your heart is the size of an ocean. Go find yourself in its hidden depths.","v":1}"#)
        XCTAssertEqual(quotes.stdout.split(separator: "\n").count, 6, quotes.stdout)
        let both = try await run([binary, "--offline", "--all", "--format", "jsonl"] + state, in: example)
        XCTAssertEqual(both.status, 0, both.stderr)
        let sources = both.stdout.split(separator: "\n").compactMap { line -> String? in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["source"] as? String
        }
        XCTAssertEqual(Set(sources), ["cabify", "quotes"])
        XCTAssertEqual(sources.count, 9)
    }

    /// A progress line on stderr: this test builds a whole package and would otherwise
    /// be silent for minutes.
    func say(_ text: String) {
        FileHandle.standardError.write(Data("ScaffoldTests: \(text)\n".utf8))
    }

    /// The files git would commit (tracked and new, not ignored), as in a fresh clone.
    func copyPackage(to copy: URL) async throws {
        let files = FileManager.default
        try? files.removeItem(at: copy)
        try files.createDirectory(at: copy, withIntermediateDirectories: true)
        let listed = try await run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], in: Self.root)
        for path in listed.stdout.split(separator: "\n").map(String.init) {
            let source = Self.root.appendingPathComponent(path)
            guard files.fileExists(atPath: source.path) else { continue }
            let target = copy.appendingPathComponent(path)
            try files.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try files.copyItem(at: source, to: target)
        }
        for command in [["git", "init", "-q"], ["git", "add", "-A"],
                        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy"]] {
            let status = try await run(command, in: copy).status
            XCTAssertEqual(status, 0)
        }
    }

    /// Runs a command with this machine's PATH and HOME (SwiftPM's caches live there).
    func run(_ arguments: [String], in directory: URL) async throws -> Binary.Run {
        let environment = ProcessInfo.processInfo.environment
        let home = environment["HOME"] ?? NSHomeDirectory()
        return try await Binary(name: "env").run(arguments, in: directory, environment: [
            "PATH": environment["PATH"] ?? "/usr/bin:/bin", "HOME": home,
            "XDG_CACHE_HOME": environment["XDG_CACHE_HOME"] ?? "\(home)/.cache",
        ], absolute: "/usr/bin/env", timeLimit: .seconds(45 * 60))  // a first build of the copy: about 8 minutes on 2 cores
    }
}
