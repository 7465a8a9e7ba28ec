import FeedSourceTesting
import Foundation
import Testing

/// The command line reads and marks as a person (issue 61): `--user`, `$AGGREGATE_USER`,
/// else the only user; the marks are that person's, as in the reader and the apps.
@Suite struct CommandLineAsYourselfTests {
    static let password = "a long enough password"

    static func starred(_ session: FixtureSession, _ arguments: [String] = [], environment: [String: String] = [:]) async throws -> [String] {
        let run = try await session.workspace.run(arguments: ["--starred", "--format", "jsonl"] + arguments, environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdoutLines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
        }
    }

    @Test func theCommandLineMarksAsTheOnlyUserOrTheOneNamed() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            #expect(try await session.run("refresh").status == 0)
            #expect(try await session.workspace.run(arguments: ["user", "add", "ann", "--password-stdin"], stdin: Self.password + "\n").status == 0)
            // The only user: the command line is ann.
            #expect(try await session.run("mark", "star", "cabify:MUG").status == 0)
            #expect(try await Self.starred(session) == ["cabify:MUG"])
            #expect(try await session.workspace.run(arguments: ["user", "add", "bob", "--password-stdin"], stdin: Self.password + "\n").status == 0)
            // Two users and none named: the default person, who starred nothing.
            #expect(try await Self.starred(session) == [])
            #expect(try await Self.starred(session, ["--user", "ann"]) == ["cabify:MUG"])
            #expect(try await Self.starred(session, environment: ["AGGREGATE_USER": "ann"]) == ["cabify:MUG"])
            #expect(try await Self.starred(session, ["--user", "bob"]) == [])
            #expect(try await session.run("mark", "star", "cabify:TSHIRT", "--user", "bob").status == 0)
            #expect(try await Self.starred(session, ["--user", "bob"]) == ["cabify:TSHIRT"])
            #expect(try await Self.starred(session, ["--user", "ann"]) == ["cabify:MUG"])
            let nobody = try await session.run("--starred", "--user", "carol")
            #expect(nobody.status == 2)
            #expect(nobody.stderrLines == ["aggregate: no user is named carol (`aggregate user list` lists them)"])
        }
    }
}
