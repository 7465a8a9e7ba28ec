import FeedConfig
import FeedEngine
import FeedState
import Foundation

/// The backends the state seams' contract tests run on (`@Test(arguments: StateUnderTest.all)`):
/// in memory, in SQLite — one connection per file as a run opens it, and a writer with
/// readers as `serve` does — and in PostgreSQL when a test server is configured.
public enum StateUnderTest: String, CaseIterable, CustomStringConvertible, Sendable {
    case memory, sqlite, sqlitePool, postgres

    public var description: String { rawValue }

    public static var all: [StateUnderTest] { PostgresTestServer.isAvailable ? allCases : [.memory, .sqlite, .sqlitePool] }

    /// Opens a fresh state of this backend, runs `body`, and removes it.
    public func with(_ body: (EngineState) async throws -> Void) async throws {
        switch self {
        case .memory:
            try await body(.inMemory())
        case .sqlite, .sqlitePool:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-contract-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            try await body(try await EngineState.open(.directory(directory), connections: self == .sqlite ? .one : .pool))
        case .postgres:
            let url = try await PostgresTestServer.createDatabase()
            defer { PostgresTestServer.dropDatabaseLater(url) }
            let state = try await EngineState.open(try StateLocation(parsing: url))
            do {
                try await body(state)
                await state.close()
            } catch {
                await state.close()
                throw error
            }
        }
    }
}
