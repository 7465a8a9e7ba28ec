import FeedCore
import Foundation

/// The state one process uses: the response cache, the page memo and first-seen log, and the backend
/// they live in (which other modules, such as the digests, open their own stores in).
public struct EngineState: Sendable {
    public enum Backend: Sendable {
        case sqlite(SQLiteStateDirectory)
        case postgres(PostgresStateDatabase)
        case memory
    }

    public let location: StateLocation?
    public let backend: Backend
    public let cache: any ResponseCache
    public let pageMemo: any PageMemoStore
    public let firstSeen: any FirstSeenLog
    /// Things the caller should tell the user (a damaged cache moved aside).
    public let notices: [String]

    /// Opens the state at `location`, creating and migrating what this module owns.
    /// `connections` shapes an SQLite directory (a database server is always a pool).
    public static func open(_ location: StateLocation,
                            connections: SQLiteStateDirectory.Connections = .one) async throws(StateOpenError) -> EngineState {
        switch location {
        case .directory(let url):
            let directory: SQLiteStateDirectory
            do {
                directory = try SQLiteStateDirectory(directory: url, connections: connections)
            } catch {
                throw .directory(url.path, PlainWords.describe(error))
            }
            return EngineState(location: location, backend: .sqlite(directory), cache: SQLiteResponseCache(directory),
                               pageMemo: SQLitePageMemoStore(directory), firstSeen: SQLiteFirstSeenLog(directory),
                               notices: directory.notices)
        case .postgres(let postgres):
            let database: PostgresStateDatabase
            do {
                database = try await PostgresStateDatabase(postgres)
            } catch {
                throw .postgres(error)
            }
            let cache = PostgresResponseCache(database)
            do {
                try await cache.migrate()
            } catch {
                await database.close()
                throw .postgres(error)
            }
            return EngineState(location: location, backend: .postgres(database), cache: cache, pageMemo: cache, firstSeen: cache,
                               notices: [])
        }
    }

    /// State that lives as long as the process (tests, and runs that keep nothing).
    public static func inMemory() -> EngineState {
        EngineState(location: nil, backend: .memory, cache: InMemoryResponseCache(), pageMemo: InMemoryPageMemoStore(),
                    firstSeen: InMemoryFirstSeenLog(), notices: [])
    }

    /// Releases connections; the state is not used after.
    public func close() async {
        if case .postgres(let database) = backend { await database.close() }
    }
}

/// Why the state could not be opened.
public enum StateOpenError: Error, Sendable, CustomStringConvertible {
    case directory(String, String)
    case postgres(PostgresStateError)

    public var description: String {
        switch self {
        case .directory(let path, let reason): "cannot open the state in \(path) (\(reason))"
        case .postgres(let error): error.description
        }
    }
}
