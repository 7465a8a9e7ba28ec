import FeedConfig
import FeedState
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// The shared state's database: one connection for single statements (reconnected when
/// it drops, so `serve` outlives a database restart), and a connection of its own for
/// each transaction and each held lock, so no statement of another task runs inside them.
/// Every failure is a ``PostgresStateError``.
public actor PostgresStateDatabase {
    public nonisolated let location: PostgresLocation
    private var shared: PostgresConnection?
    private var opening: Task<PostgresConnection, any Error>?
    private var migrated: Set<String> = []
    /// The check of each component's migrations under way (``migrate(_:)``).
    private var migrating: [String: Task<Void, any Error>] = [:]
    private var closed = false
    static let logger = Logger(label: "aggregate.postgres") { _ in SwiftLogNoOpLogHandler() }

    /// Connects (failing fast when the server cannot be reached) and keeps the connection.
    public init(_ location: PostgresLocation) async throws(PostgresStateError) {
        self.location = location
        do {
            shared = try await Self.connect(location)
        } catch {
            throw .unreachable(location.description, PostgresStateError.reason(error))
        }
    }

    /// Runs one statement on the shared connection and returns its rows.
    public func query(_ query: PostgresQuery) async throws(PostgresStateError) -> [PostgresRow] {
        do {
            let connection = try await sharedConnection()
            return try await Self.rows(query, on: connection)
        } catch let error as PostgresStateError {
            throw error
        } catch {
            throw .failed(PostgresStateError.reason(error))
        }
    }

    /// Runs `body` in one transaction on a connection of its own: committed when `body`
    /// returns, rolled back when it throws.
    public nonisolated func withTransaction<T: Sendable>(
        _ body: @Sendable (PostgresConnection) async throws -> T) async throws(PostgresStateError) -> T {
        try await withConnection { connection in
            try await Self.inTransaction(on: connection, body)
        }
    }

    /// Runs `body` in a transaction on `connection`: committed when it returns, rolled back
    /// when it throws.
    public static func inTransaction<T: Sendable>(
        on connection: PostgresConnection, _ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        _ = try await rows("BEGIN", on: connection)
        do {
            let value = try await body(connection)
            _ = try await rows("COMMIT", on: connection)
            return value
        } catch {
            _ = try? await rows("ROLLBACK", on: connection)
            throw error
        }
    }

    /// Runs `body` with a new connection, closed after (session state such as an advisory
    /// lock ends with it).
    public nonisolated func withConnection<T: Sendable>(
        _ body: @Sendable (PostgresConnection) async throws -> T) async throws(PostgresStateError) -> T {
        let connection = try await openConnection()
        do {
            let value = try await body(connection)
            try? await connection.close()
            return value
        } catch {
            try? await connection.close()
            if let error = error as? PostgresStateError { throw error }
            throw .failed(PostgresStateError.reason(error))
        }
    }

    /// A new connection of the caller's own, to close when done.
    public nonisolated func openConnection() async throws(PostgresStateError) -> PostgresConnection {
        do {
            return try await Self.connect(location)
        } catch {
            throw .unreachable(location.description, PostgresStateError.reason(error))
        }
    }

    /// Applies `schema`'s migrations not yet applied, once per process. Hosts starting at
    /// the same moment queue on one advisory lock, so each migration runs exactly once.
    /// Callers asking at once (`serve`'s refreshes of 500 sources at start-up) wait for one
    /// check, which reads the applied migrations on the shared connection and takes the
    /// lock, on a connection of its own, only when one is missing: a connection per caller
    /// held 300 MiB of `serve` at start-up, and a run paid a second connection's handshake.
    public func migrate(_ schema: PostgresSchema) async throws(PostgresStateError) {
        guard !migrated.contains(schema.component) else { return }
        let check = migrating[schema.component] ?? Task { try await self.applyMigrations(schema) }
        migrating[schema.component] = check
        do {
            try await check.value
            migrated.insert(schema.component)
            migrating[schema.component] = nil
        } catch {
            migrating[schema.component] = nil
            throw (error as? PostgresStateError) ?? .failed(PostgresStateError.reason(error))
        }
    }

    private func applyMigrations(_ schema: PostgresSchema) async throws(PostgresStateError) {
        let wanted = Set(schema.migrations.map(\.id))
        // No table yet (a new database) reads as an error: the locked path makes it.
        if let applied = try? await query("SELECT id FROM aggregate_migration WHERE component = \(schema.component)"),
           wanted.isSubset(of: Set(applied.compactMap { try? $0.decode(String.self) })) {
            return
        }
        try await withTransaction { connection in
            _ = try await Self.rows("SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLock))", on: connection)
            _ = try await Self.rows("""
                CREATE TABLE IF NOT EXISTS aggregate_migration (
                  component text NOT NULL, id text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(),
                  PRIMARY KEY (component, id))
                """, on: connection)
            let applied = try await Self.rows("SELECT id FROM aggregate_migration WHERE component = \(schema.component)", on: connection)
            let done = Set(try applied.map { try $0.decode(String.self) })
            for migration in schema.migrations where !done.contains(migration.id) {
                for statement in migration.statements {
                    _ = try await Self.rows(PostgresQuery(unsafeSQL: statement), on: connection)
                }
                try await migration.then?(connection)
                _ = try await Self.rows("INSERT INTO aggregate_migration (component, id) VALUES (\(schema.component), \(migration.id))",
                                        on: connection)
            }
        }
    }

    /// Closes the shared connection; later calls fail.
    public func close() async {
        closed = true
        opening?.cancel()
        if let shared { try? await shared.close() }
        shared = nil
    }

    private func sharedConnection() async throws -> PostgresConnection {
        if closed { throw PostgresStateError.failed("the state database was closed") }
        if let shared, !shared.isClosed { return shared }
        if let opening { return try await opening.value }
        let location = location
        let task = Task { try await Self.connect(location) }
        opening = task
        defer { opening = nil }
        do {
            let connection = try await task.value
            shared = connection
            return connection
        } catch {
            throw PostgresStateError.unreachable(location.description, PostgresStateError.reason(error))
        }
    }

    /// Runs `query` and reads every row (a row sequence left unread would stall the
    /// connection's next statement).
    public static func rows(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> [PostgresRow] {
        try await failingOnceClosed(connection) {
            var rows: [PostgresRow] = []
            for try await row in try await connection.query(query, logger: logger) { rows.append(row) }
            return rows
        }
    }

    /// `body`'s value; or, once `connection` has been closed for a second and `body` has
    /// not ended, a failure. PostgresNIO hands a statement to its channel without a
    /// promise, so a statement sent as the connection closes (a database restart) is never
    /// answered (vapor/postgres-nio#487, reverted in #501): its caller waited for ever, and
    /// `serve` could not stop (DatabaseDownServeTests). `body` runs in a task of its own,
    /// which the caller stops waiting for; the statements under way are looked at once a
    /// second by one task (``StatementWatch``): a task and a timer per statement made
    /// `serve`'s uncached PostgreSQL pages 1.24× slower (p50).
    static func failingOnceClosed<T: Sendable>(
        _ connection: PostgresConnection, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let work = StatementTask()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let answer = FirstAnswer(continuation)
                let watched = StatementWatch.shared.add(connection) {
                    answer.give(.failure(PostgresStateError.failed("the connection closed while a statement ran")))
                }
                work.start {
                    let result: Result<T, any Error>
                    do {
                        result = .success(try await body())
                    } catch {
                        result = .failure(error)
                    }
                    StatementWatch.shared.remove(watched)
                    answer.give(result)
                }
            }
        } onCancel: {
            work.cancel()
        }
    }

    /// A continuation resumed by the first of those who give it an answer.
    private final class FirstAnswer<T: Sendable>: Sendable {
        private let waiting: Mutex<CheckedContinuation<T, any Error>?>

        init(_ continuation: CheckedContinuation<T, any Error>) {
            waiting = Mutex(continuation)
        }

        func give(_ result: Result<T, any Error>) {
            waiting.withLock { $0.take() }?.resume(with: result)
        }
    }

    /// The task a statement runs in, cancelled with its caller (also when the caller is
    /// cancelled before the task starts).
    private final class StatementTask: Sendable {
        private let state = Mutex<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))

        func start(_ operation: @escaping @Sendable () async -> Void) {
            let task = Task { await operation() }
            let cancelled = state.withLock { state in
                state.task = task
                return state.cancelled
            }
            if cancelled { task.cancel() }
        }

        func cancel() {
            let task = state.withLock { state in
                state.cancelled = true
                return state.task
            }
            task?.cancel()
        }
    }

    /// The TLS settings of `location`'s connections, made once a process: a TLS context
    /// reads the system's trust roots, which each connection used to read again.
    private static let tlsContexts = Mutex<[PostgresLocation.TLSMode: PostgresConnection.Configuration.TLS]>([:])

    private static func tls(_ mode: PostgresLocation.TLSMode) throws -> PostgresConnection.Configuration.TLS {
        try tlsContexts.withLock { contexts in
            if let made = contexts[mode] { return made }
            let made: PostgresConnection.Configuration.TLS = switch mode {
            case .disable: .disable
            case .prefer: .prefer(try .init(configuration: .makeClientConfiguration()))
            case .require: .require(try .init(configuration: .makeClientConfiguration()))
            }
            contexts[mode] = made
            return made
        }
    }

    private static func connect(_ location: PostgresLocation) async throws -> PostgresConnection {
        let tls = try tls(location.tls)
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: tls)
        configuration.options.connectTimeout = .seconds(10)
        return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    }
}

/// The statements under way, each with its connection and how to fail it: one task looks
/// at them once a second and fails those whose connection has been closed since the look
/// before (``PostgresStateDatabase/failingOnceClosed(_:_:)``). It starts with the first
/// statement and runs for the rest of the process.
final class StatementWatch: Sendable {
    static let shared = StatementWatch()

    private struct Statement {
        let connection: PostgresConnection
        let fail: @Sendable () -> Void
        /// Its connection was closed at the last look.
        var closed = false
    }

    private struct State {
        var next = 0
        var statements: [Int: Statement] = [:]
        var looking = false
    }

    private let state = Mutex(State())

    /// Watches a statement on `connection`; returns its number, for ``remove(_:)``.
    func add(_ connection: PostgresConnection, fail: @escaping @Sendable () -> Void) -> Int {
        let (number, start) = state.withLock { state in
            state.next += 1
            state.statements[state.next] = Statement(connection: connection, fail: fail)
            defer { state.looking = true }
            return (state.next, !state.looking)
        }
        if start { Task { await self.look() } }
        return number
    }

    /// The statement ended.
    func remove(_ number: Int) {
        _ = state.withLock { $0.statements.removeValue(forKey: number) }
    }

    private func look() async {
        while true {
            try? await Task.sleep(for: .seconds(1))
            let failing = state.withLock { state in
                var failing: [@Sendable () -> Void] = []
                for (number, statement) in state.statements where statement.connection.isClosed {
                    if statement.closed {
                        failing.append(statement.fail)
                        state.statements[number] = nil
                    } else {
                        state.statements[number]?.closed = true
                    }
                }
                return failing
            }
            for fail in failing { fail() }
        }
    }
}

/// One module's tables in the shared database: its migrations in order, each a list of
/// statements, recorded under the module's name in `aggregate_migration`.
public struct PostgresSchema: Sendable {
    public struct Migration: Sendable {
        public let id: String
        public let statements: [String]
        /// Run after the statements, in their transaction: for rows only Swift can make.
        public let then: (@Sendable (PostgresConnection) async throws -> Void)?

        public init(_ id: String, _ statements: [String], then: (@Sendable (PostgresConnection) async throws -> Void)? = nil) {
            self.id = id
            self.statements = statements
            self.then = then
        }
    }

    public let component: String
    public let migrations: [Migration]

    public init(component: String, migrations: [Migration]) {
        self.component = component
        self.migrations = migrations
    }

    /// The advisory lock key every migration takes ("aggr" in ASCII).
    static let migrationLock: Int64 = 0x6167_6772
    /// The advisory lock key every recording of listings takes ("aggrrec" in ASCII).
    static let recordingLock: Int64 = 0x61_6767_7272_6563
}

/// Why the shared state could not be used, in words that never hold the password.
public enum PostgresStateError: Error, Sendable, CustomStringConvertible {
    /// No connection: the server is down, refuses us, or the URL is wrong.
    case unreachable(String, String)
    /// A statement failed, or the connection dropped while it ran.
    case failed(String)

    public var description: String {
        switch self {
        case .unreachable(let location, let reason): "cannot connect to the state database \(location): \(reason)"
        case .failed(let reason): "the state database failed: \(reason)"
        }
    }

    /// What went wrong, from PostgresNIO's and NIO's errors: the server's own message when
    /// it sent one, else the system's words for the socket error.
    static func reason(_ error: any Error) -> String {
        if let error = error as? PostgresStateError {
            switch error {
            case .unreachable(_, let reason), .failed(let reason): return reason
            }
        }
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return reason(underlying) }
            switch error.code {
            case .serverClosedConnection, .uncleanShutdown: return "the server closed the connection"
            case .clientClosedConnection: return "the connection was closed"
            case .sslUnsupported: return "the server does not support TLS (add ?sslmode=disable to the URL to connect without it)"
            case .authMechanismRequiresPassword: return "the server asks for a password and the URL gives none"
            default: return "\(error.code)"
            }
        }
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)).lowercased() }
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return reason(first.error) }
            if let dns = error.dnsAAAAError ?? error.dnsAError { return "cannot resolve \(error.host): \(dns)" }
            return "cannot connect to \(error.host):\(error.port)"
        }
        if let error = error as? ChannelError, case .connectTimeout = error { return "no answer within 10 seconds" }
        if error is CancellationError { return "cancelled" }
        return "\(error)"
    }
}
