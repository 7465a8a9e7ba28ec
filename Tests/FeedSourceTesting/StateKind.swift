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
    public static func createDatabase(base: String? = url) throws -> String {
        let name = "aggregate_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased())"
        try psql(base: base, "CREATE DATABASE \(name)")
        guard let url = url(database: name, base: base) else { throw TestServerError.notConfigured }
        return url
    }

    /// Drops a database made by ``createDatabase(base:)``, closing its connections.
    public static func dropDatabase(_ databaseURL: String, base: String? = url) {
        guard let name = URLComponents(string: databaseURL)?.path.dropFirst(), !name.isEmpty else { return }
        try? psql(base: base, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// Runs one SQL command with `psql` against `base` (or the database named in `url`).
    public static func psql(base: String? = url, _ sql: String) throws {
        guard let base else { throw TestServerError.notConfigured }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", base, "-q", "-v", "ON_ERROR_STOP=1", "-c", sql]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestServerError.psql(sql, String(decoding: message, as: UTF8.self))
        }
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
    /// Holds the advisory lock `aggregate` takes for `name` from a `psql` session of its own
    /// for `seconds` (or until the returned process is terminated); returns once it is held.
    public static func holdAdvisoryLock(_ name: String, in database: String?, seconds: Int) throws -> Process {
        guard let database else { throw TestServerError.notConfigured }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", database, "-q", "-v", "ON_ERROR_STOP=1",
                             "-c", "SELECT pg_advisory_lock(hashtextextended('\(name)', 0))",
                             "-c", "SELECT 'held'", "-c", "SELECT pg_sleep(\(seconds))"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // psql prints the second result once the lock is held.
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("held") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        return process
    }
}

extension Workspace {
    /// Runs SQL against this workspace's cache: `sqlite3` on `state/cache.sqlite`, or `psql`
    /// on its database (`postgres` defaults to the same text); returns what it printed,
    /// one row per line.
    public func cacheSQL(_ sqlite: String, postgres: String? = nil) async throws -> String {
        let process = Process()
        switch backend {
        case .sqlite:
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            process.arguments = [url.appendingPathComponent("state/cache.sqlite").path, sqlite]
        case .postgres:
            guard let databaseURL else { throw PostgresTestServer.TestServerError.notConfigured }
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["psql", databaseURL, "-At", "-q", "-v", "ON_ERROR_STOP=1", "-c", postgres ?? sqlite]
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        try await process.runUntilExit()
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
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

    public init() async throws {
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

    deinit {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Self.script, "stop", directory]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
        process.waitUntilExit()
    }

    private static func script(_ arguments: [String], port: Int) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["AGGREGATE_TEST_POSTGRES_PORT": "\(port)"]) { _, new in new }
        // A file, not a pipe: the server started by the script would inherit the pipe's
        // writing end and the read would never see its end.
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-pg-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        try await process.runUntilExit()
        let text = try String(contentsOf: output, encoding: .utf8)
        guard process.terminationStatus == 0 else { throw PostgresTestServer.TestServerError.psql(arguments.joined(separator: " "), text) }
        return text
    }
}
