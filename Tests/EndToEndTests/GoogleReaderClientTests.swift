import FeedSourceTesting
import FixtureKit
import Foundation
import Testing

/// A Python of at least 3.12 that imports the PyPI `google-reader` client: one on PATH, else
/// pyenv's (these machines carry 3.12 and 3.13 beside the system's 3.11). `.ci/run`
/// installs the client into the one it finds the same way.
enum GoogleReaderPython {
    static let path: String? = {
        let pathDirectories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        let onPath = ["python3.13", "python3.12", "python3"].flatMap { name in pathDirectories.map { $0 + "/" + name } }
        let pyenv = (ProcessInfo.processInfo.environment["PYENV_ROOT"] ?? NSHomeDirectory() + "/.pyenv") + "/versions"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: pyenv)) ?? [])
            .sorted { $0.compare($1, options: .numeric) == .orderedDescending }.map { "\(pyenv)/\($0)/bin/python3" }
        return (onPath + versions).first { candidate in
            guard FileManager.default.isExecutableFile(atPath: candidate) else { return false }
            let probe = Process()
            probe.executableURL = URL(fileURLWithPath: candidate)
            probe.arguments = ["-c", "import sys, google_reader; sys.exit(sys.version_info < (3, 12))"]
            probe.standardOutput = FileHandle.nullDevice
            probe.standardError = FileHandle.nullDevice
            guard (try? probe.run()) != nil else { return false }
            probe.waitUntilExit()
            return probe.terminationStatus == 0
        }
    }()
}

/// The PyPI `google-reader` client (issue 62), a second independent Google Reader client
/// beside newsboat, against the built binary: sign-in, subscriptions, five unread ids while
/// more are unread, contents with a podcast's enclosures, star, mark-all-as-read,
/// subscribe and unsubscribe (Tests/Clients/google_reader_client.py). Skipped, saying so, where no
/// Python 3.12 with the client is found (`.ci/run` installs it).
@Suite(.enabled(if: GoogleReaderPython.path != nil, "no Python >= 3.12 with the PyPI google-reader client (python3.12 -m pip install google-reader)"))
struct GoogleReaderClientTests {
    static let password = "a long enough password"

    @Test func thePyPIClientRunsEveryStep() async throws {
        let sources = [FixtureSourceEntry(id: "podcast", plugin: "feed", path: "/feed/podcast.xml", route: "feed")] + FixtureWorld.only("target")
        // The fixture server is on this machine: its feeds may be subscribed to.
        try await ServeTests.withServe(sources: sources, arguments: ["--allow-private-feeds"], prepare: { session async throws in
            #expect(try await session.workspace.run(arguments: ["user", "add", "ann", "--password-stdin"], stdin: Self.password + "\n").status == 0)
        }) { session, served in
            // The background refresh's first recording of both sources.
            for _ in 0..<100 {
                let counts = try await ServeTests.get(served.base + "/api/greader/reader/api/0/unread-count",
                                                      headers: [PeopleEndToEndTests.basic("ann", Self.password)]).body
                if counts.contains(#""id":"feed/podcast""#) && counts.contains(#""id":"feed/target""#) { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            let script = ReadmeSections.root.appendingPathComponent("Tests/Clients/google_reader_client.py").path
            let run = try await TestProcess.run(URL(fileURLWithPath: try #require(GoogleReaderPython.path)), [script, served.base, "ann", Self.password, session.base.absoluteString + "/feed/blog.atom.xml"],
                                                 timeLimit: .seconds(120))
            print(run.stdout + run.stderr)
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.hasSuffix("all passed\n"))
            // The subscription came and went through Sources.yml.
            let file = try String(contentsOf: session.workspace.url.appendingPathComponent("Sources.yml"), encoding: .utf8)
            #expect(file.contains("id: podcast") && file.contains("id: target") && !file.contains("blog.atom.xml"), "\(file)")
        }
    }
}
