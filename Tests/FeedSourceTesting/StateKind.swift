import Foundation

/// Which store a test's state lives in: the tests that cover the cache and the digests
/// run once per backend (`@Test(arguments: StateKind.all)`).
public enum StateKind: String, Sendable, CaseIterable, CustomStringConvertible {
    case sqlite
    case postgres

    /// SQLite always; PostgreSQL when a test server is configured (``PostgresTestServer``).
    public static var all: [StateKind] {
        PostgresTestServer.isAvailable ? [.sqlite, .postgres] : [.sqlite]
    }

    public var description: String { rawValue }
}

/// The PostgreSQL server the tests may use: `AGGREGATE_TEST_POSTGRES`, a URL of a role that
/// may create databases (`Tools/test-postgres.sh start` prints it; `.ci/run` sets it).
/// Each test gets a database of its own, dropped when its workspace goes.
public enum PostgresTestServer {
    public static let url: String? = ProcessInfo.processInfo.environment["AGGREGATE_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }

    /// The cluster's data directory, for tests that stop and start the server.
    public static let dataDirectory: String? = ProcessInfo.processInfo.environment["AGGREGATE_TEST_POSTGRES_DATA"]

    public static var isAvailable: Bool { url != nil }

    /// Why the PostgreSQL tests do not run, for the skipped test's message.
    public static let skipReason = "PostgreSQL tests skipped: AGGREGATE_TEST_POSTGRES is not set (run `eval \"$(Tools/test-postgres.sh start /tmp/aggregate-pg)\"` first, as .ci/run does)"

    /// `url` with its database replaced by `database`.
    public static func url(database: String, base: String? = url) -> String? {
        guard let base, var components = URLComponents(string: base) else { return nil }
        components.path = "/\(database)"
        return components.string
    }

    /// Creates an empty database and returns its URL.
    public static func createDatabase(base: String? = url) async throws -> String {
        let name = "aggregate_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased())"
        try await psql(base: base, "CREATE DATABASE \(name)")
        guard let url = url(database: name, base: base) else { throw TestServerError.notConfigured }
        return url
    }

    /// Drops a database made by ``createDatabase(base:)``, closing its connections, without
    /// waiting for it: from a `deinit` or a `defer`, which cannot wait. `psql` goes on if
    /// the test process ends first.
    public static func dropDatabaseLater(_ databaseURL: String, base: String? = url) {
        guard let name = URLComponents(string: databaseURL)?.path.dropFirst(), !name.isEmpty else { return }
        Task.detached { try? await psql(base: base, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    }

    /// Runs one SQL command with `psql` against `base` (or the database named in `url`).
    public static func psql(base: String? = url, _ sql: String) async throws {
        guard let base else { throw TestServerError.notConfigured }
        let run = try await TestProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["psql", base, "-q", "-v", "ON_ERROR_STOP=1", "-c", sql],
                                            timeLimit: .seconds(120))
        guard run.status == 0 else { throw TestServerError.psql(sql, run.stderr) }
    }

    public enum TestServerError: Error, CustomStringConvertible {
        case notConfigured
        case psql(String, String)

        public var description: String {
            switch self {
            case .notConfigured: PostgresTestServer.skipReason
            case .psql(let sql, let message): "psql \(sql): \(message)"
            }
        }
    }
}

extension PostgresTestServer {
    /// A `psql` session holding the advisory lock `aggregate` takes for `name`.
    public final class AdvisoryLockHolder: Sendable {
        let process: Process
        let exited: AsyncStream<Void>

        init(process: Process, exited: AsyncStream<Void>) {
            self.process = process
            self.exited = exited
        }

        /// Ends the session, and so the lock; waits for it at most ten seconds.
        public func release() async {
            _ = await process.terminate(awaiting: exited, seconds: 10)
        }
    }

    /// Holds the advisory lock `aggregate` takes for `name` from a `psql` session of its own
    /// for `seconds` (or until it is released); returns once it is held.
    public static func holdAdvisoryLock(_ name: String, in database: String?, seconds: Int) async throws -> AdvisoryLockHolder {
        guard let database else { throw TestServerError.notConfigured }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-lock-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", database, "-q", "-v", "ON_ERROR_STOP=1",
                             "-c", "SELECT pg_advisory_lock(hashtextextended('\(name)', 0))",
                             "-c", "SELECT 'held'", "-c", "SELECT pg_sleep(\(seconds))"]
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let holder = AdvisoryLockHolder(process: process, exited: try process.start())
        // psql prints the second result once the lock is held.
        for _ in 0..<600 {
            if String(decoding: (try? Data(contentsOf: output)) ?? Data(), as: UTF8.self).contains("held") { return holder }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        await holder.release()
        throw TestServerError.psql("SELECT pg_advisory_lock", "the lock was not held within 30 s")
    }
}

extension Workspace {
    /// Runs SQL against this workspace's cache: `sqlite3` on `state/cache.sqlite`, or `psql`
    /// on its database (`postgres` defaults to the same text); returns what it printed,
    /// one row per line.
    public func cacheSQL(_ sqlite: String, postgres: String? = nil) async throws -> String {
        switch backend {
        case .sqlite:
            return try await TestProcess.run(URL(fileURLWithPath: "/usr/bin/sqlite3"),
                                              [url.appendingPathComponent("state/cache.sqlite").path, sqlite]).stdout
        case .postgres:
            guard let databaseURL else { throw PostgresTestServer.TestServerError.notConfigured }
            return try await TestProcess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                              ["psql", databaseURL, "-At", "-q", "-v", "ON_ERROR_STOP=1", "-c", postgres ?? sqlite]).stdout
        }
    }
}

/// A PostgreSQL cluster of one test's own (`Tools/test-postgres.sh`), for tests that stop
/// and start the server: the shared test server must stay up for the others.
public final class PrivateCluster: Sendable {
    public let url: String
    let directory: String
    let port: Int

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tools/test-postgres.sh").path

    /// Runs `body` with a cluster of its own, stopped and removed afterwards (also when
    /// `body` throws), before this returns.
    public static func withCluster<T>(_ body: (PrivateCluster) async throws -> T) async throws -> T {
        let cluster = try await PrivateCluster()
        do {
            let result = try await body(cluster)
            await cluster.stop()
            return result
        } catch {
            await cluster.stop()
            throw error
        }
    }

    private init() async throws {
        port = Int.random(in: 20_000...29_000)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-pg-\(UUID().uuidString.prefix(8))").path
        let printed = try await Self.script(["start", directory], port: port)
        guard let line = printed.split(separator: "\n").first(where: { $0.hasPrefix("export AGGREGATE_TEST_POSTGRES=") }) else {
            throw PostgresTestServer.TestServerError.psql("start", printed)
        }
        url = String(line.dropFirst("export AGGREGATE_TEST_POSTGRES=".count))
    }

    /// Stops the server at once (as a crash or a restart would).
    public func pause() async throws { _ = try await Self.script(["pause", directory], port: port) }

    public func resume() async throws { _ = try await Self.script(["resume", directory], port: port) }

    private func stop() async {
        _ = try? await Self.script(["stop", directory], port: port)
    }

    private static func script(_ arguments: [String], port: Int) async throws -> String {
        // Its output is a file (TestProcess): the server it starts keeps no pipe of ours open.
        let run = try await TestProcess.run(URL(fileURLWithPath: "/bin/bash"), [script] + arguments,
                                             environment: ProcessInfo.processInfo.environment.merging(["AGGREGATE_TEST_POSTGRES_PORT": "\(port)"]) { _, new in new },
                                             timeLimit: .seconds(180))
        guard run.status == 0 else { throw PostgresTestServer.TestServerError.psql(arguments.joined(separator: " "), run.stdout + run.stderr) }
        return run.stdout
    }
}
