import FeedCore
import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// State on PostgreSQL shared by several "hosts" (processes with different working and
/// local state directories, issue 16). Skipped, with the reason printed, when no test
/// server is configured.
@Suite(.serialized, .enabled(if: PostgresTestServer.isAvailable, Comment(rawValue: PostgresTestServer.skipReason)))
struct SharedStateTests {
    /// Cabify and Target at the fixture server; Target fails fast.
    static func yaml(_ base: URL) -> String {
        DigestEndToEndTests.yaml(base)
    }

    static let date = "2026-11-22T08:00:00Z"

    /// `digest --name daily` in `workspace` against the shared `database`.
    static func digest(_ workspace: Workspace, database: String, _ arguments: String...) async throws -> Binary.Run {
        try await Binary.aggregate.run(["digest", "--name", "daily", "--date", date, "--format", "jsonl", "--state", database] + arguments,
                                       in: workspace.url)
    }

    /// Two hosts (their own directories, one database) run the same digest at the same
    /// moment, 20 times, with a new card each time: every card is reported exactly once
    /// between them. Their first start also migrates the empty database at the same moment.
    @Test func twoHostsRunningTheSameDigestReportEachChangeOnce() async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let hostA = try Workspace(sourcesYml: Self.yaml(base))
            let hostB = try Workspace(sourcesYml: Self.yaml(base))
            let database = try await PostgresTestServer.createDatabase()
            defer { PostgresTestServer.dropDatabaseLater(database) }
            var output = ""
            for trial in 0..<21 {
                // Trial 0 records the baseline (both hosts start on an empty database).
                if trial > 0 {
                    server.control.edit("cabify", .add(list: "products", item: ["code": .string("SHARED\(trial)"),
                                                                              "name": .string("Shared \(trial)"), "price": 1]))
                }
                async let a = Self.digest(hostA, database: database)
                async let b = Self.digest(hostB, database: database)
                let runs = try await [a, b]
                for run in runs {
                    #expect(run.status == 0, "trial \(trial): \(run.stderr)")
                    output += run.stdout
                }
            }
            for trial in 1...20 {
                let count = output.components(separatedBy: "\"id\":\"cabify:SHARED\(trial)\"").count - 1
                #expect(count == 1, "SHARED\(trial) reported \(count) times")
            }
            let migrations = try await hostA.sql(database, "SELECT component || ' ' || id FROM aggregate_migration ORDER BY component, split_part(id, ':', 1)::integer")
            #expect(migrations == "cards 1: card store\ncards 2: listing tags\ncards 3: reading marks\ncards 4: search\ncards 5: marks per person\ncards 6: card numbers\ncards 7: marks versions\ncards 8: pages from indexes\ncards 9: read counts\ncards 10: listing times\ncards 11: search rows written apart from recording\ncards 12: undated cards by first seen\ncards 13: cards numbered in the order first seen\ncards 14: item decisions\ncards 15: pages by title\ncards 16: same-item keys\ndigests 1: digest state, pending delivery\ndigests 2: alerts and delivery targets\n"
                + "digests 3: outbox order\ndigests 4: file output through the outbox\nengine 1: http cache, mapped pages, first seen\nengine 2: request identities\nengine 3: body digests\nengine 4: the first-seen log dropped\n")
        }
    }

    /// Six hosts start on an empty database at once: each migration runs once, all succeed.
    @Test func hostsStartingTogetherMigrateOnce() async throws {
        let workspace = try Workspace(sourcesYml: try Workspace.shippedSourcesYml)
        let database = try await PostgresTestServer.createDatabase()
        defer { PostgresTestServer.dropDatabaseLater(database) }
        let runs = try await withThrowingTaskGroup(of: Binary.Run.self) { group in
            for _ in 0..<6 { group.addTask { try await workspace.aggregate("--offline", "--format", "jsonl", "--state", database) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(runs.allSatisfy { $0.status == 0 && $0.stderr == "" })
        #expect(Set(runs.map(\.stdout)).count == 1)
        #expect(try await workspace.sql(database, "SELECT id FROM aggregate_migration ORDER BY id") == "1: http cache, mapped pages, first seen\n2: request identities\n3: body digests\n4: the first-seen log dropped\n")
    }

    /// The server stops while a digest is fetching: that run fails with one line and
    /// commits nothing; once the server is back, the next run reports the change.
    @Test func aDatabaseRestartMidRunFailsThatRunAndTheNextRecovers() async throws {
        try await PrivateCluster.withCluster { cluster in
            let server = FixtureWorld.server()
            try await server.withRunning { base in
                let workspace = try Workspace(sourcesYml: Self.yaml(base))
                let baseline = try await Self.digest(workspace, database: cluster.url)
                #expect(baseline.status == 0)
                server.control.edit("cabify", DigestEndToEndTests.hoodie)
                server.control.set("cabify", [Fault(latencyMs: 1500)])
                async let cut = Self.digest(workspace, database: cluster.url)
                // Mid-run is while the digest holds its lock: taken before it fetches, and the
                // upstream answers 1.5 s later. Waiting for the lock, not for a fixed time, keeps
                // a slow start (CI under load) from stopping the database before the run began.
                try await Self.waitForAnAdvisoryLock(cluster.url)
                try await cluster.pause()
                let failed = try await cut
                #expect(failed.status == 1)
                #expect(failed.stdout == "")
                #expect(failed.stderrLines.last?.hasPrefix("aggregate: digest 'daily' failed: ") == true)
                #expect(failed.stderrLines.last?.hasSuffix("; nothing was committed") == true)
                #expect(!failed.stderr.contains("test-secret-pw"))

                let down = try await Self.digest(workspace, database: cluster.url)
                #expect(down.status == 1)
                #expect(down.stderrLines.count == 1)
                #expect(down.stderrLines.first?.hasSuffix(": connection refused") == true)

                try await cluster.resume()
                server.control.set("cabify", [])
                let recovered = try await Self.digest(workspace, database: cluster.url)
                #expect(recovered.status == 0, "\(recovered.stderr)")
                #expect(recovered.stdoutLines.count == 1)
                #expect(recovered.stdout.contains("\"id\":\"cabify:HOODIE\""))
            }
        }
    }

    /// Returns once a session holds an advisory lock in the database at `url`.
    static func waitForAnAdvisoryLock(_ url: String) async throws {
        let check = "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted) "
            + "THEN RAISE EXCEPTION 'no lock yet'; END IF; END $$"
        for _ in 0..<500 {
            if (try? await PostgresTestServer.psql(base: url, check)) != nil { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("no session took an advisory lock within 10 s")
    }

    /// A bad password or a closed port is one line naming the database, without the
    /// password, and exit 1; nothing is printed on stdout.
    @Test func connectionFailuresAreOneLineWithoutThePassword() async throws {
        let workspace = try Workspace(sourcesYml: try Workspace.shippedSourcesYml)
        guard let good = PostgresTestServer.url, var components = URLComponents(string: good) else { return }
        components.password = "wrong-secret"
        let wrong = try await workspace.aggregate("--offline", "--state", components.string ?? "")
        let port = components.port ?? 5432
        #expect(wrong.status == 1)
        #expect(wrong.stdout == "")
        #expect(wrong.stderrLines == [
            "aggregate: cannot connect to the state database postgres://aggregate:***@127.0.0.1:\(port)/aggregate: password authentication failed for user \"aggregate\"",
        ])
        components.port = 1
        let refused = try await workspace.aggregate("digest", "--name", "daily", "--state", components.string ?? "")
        #expect(refused.status == 1)
        #expect(refused.stderrLines == [
            "aggregate: cannot connect to the state database postgres://aggregate:***@127.0.0.1:1/aggregate: connection refused",
        ])
        let scheme = try await workspace.aggregate("--offline", "--state", "mysql://u:secret@db/x")
        #expect(scheme.status == 2)
        #expect(scheme.stderrLines == [
            "aggregate: --state: mysql:// is not a state store: give a directory path (SQLite) or postgres://user:password@host:5432/database",
        ])
        #expect(!(wrong.stderr + refused.stderr + scheme.stderr).contains("secret"))
    }

    /// `state:` in Sources.yml (with `${VAR}`), then `AGGREGATE_STATE`, then `--state`: the
    /// later wins; the chosen database holds the state (an offline run records no card, but
    /// reads the card store for its feed's undated entries: its tables are made there).
    @Test func theStateKeyTheEnvironmentAndTheFlagChooseTheStore() async throws {
        let fromFile = try await PostgresTestServer.createDatabase()
        let fromEnvironment = try await PostgresTestServer.createDatabase()
        defer {
            PostgresTestServer.dropDatabaseLater(fromFile)
            PostgresTestServer.dropDatabaseLater(fromEnvironment)
        }
        let shipped = try Workspace.shippedSourcesYml
        let workspace = try Workspace(sourcesYml: "state: ${SHARED_STATE}\n" + shipped)
        let file = try await workspace.aggregate("--offline", "--format", "atom", environment: ["SHARED_STATE": fromFile])
        #expect(file.status == 0)
        #expect(try await workspace.sql(fromFile, "SELECT to_regclass('card') IS NOT NULL") == "t\n")
        let environment = try await workspace.aggregate("--offline", "--format", "atom",
                                                        environment: ["SHARED_STATE": fromFile, "AGGREGATE_STATE": fromEnvironment])
        #expect(environment.status == 0)
        #expect(try await workspace.sql(fromEnvironment, "SELECT to_regclass('card') IS NOT NULL") == "t\n")
        let flag = try await workspace.aggregate("--offline", "--state-dir", "local",
                                                 environment: ["SHARED_STATE": fromFile, "AGGREGATE_STATE": fromEnvironment])
        #expect(flag.status == 0)
        #expect(FileManager.default.fileExists(atPath: workspace.url.appendingPathComponent("local/cache.sqlite").path))
    }
}

extension Workspace {
    /// One SQL query's rows (`psql -At`) on `database`.
    func sql(_ database: String, _ query: String) async throws -> String {
        try await TestProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["psql", database, "-At", "-q", "-c", query]).stdout
    }
}
