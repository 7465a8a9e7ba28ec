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
    /// How requests are named in ``cache``: keyed by its secret.
    public let identity: RequestIdentity
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
            let cache = SQLiteResponseCache(directory)
            let (identity, notice) = await identity(of: cache)
            return EngineState(location: location, backend: .sqlite(directory), cache: cache,
                               pageMemo: SQLitePageMemoStore(directory), firstSeen: SQLiteFirstSeenLog(directory), identity: identity,
                               notices: directory.notices + [notice].compactMap { $0 })
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
            let (identity, notice) = await identity(of: cache)
            return EngineState(location: location, backend: .postgres(database), cache: cache, pageMemo: cache, firstSeen: cache,
                               identity: identity, notices: [notice].compactMap { $0 })
        }
    }

    /// State that lives as long as the process (tests, and runs that keep nothing).
    public static func inMemory() -> EngineState {
        EngineState(location: nil, backend: .memory, cache: InMemoryResponseCache(), pageMemo: InMemoryPageMemoStore(),
                    firstSeen: InMemoryFirstSeenLog(), identity: .random(), notices: [])
    }

    /// The identity `cache` keys its requests by; when its secret cannot be read, one of
    /// this process's own (what it caches, no other process finds), said in a notice.
    private static func identity(of cache: any ResponseCache) async -> (RequestIdentity, String?) {
        do {
            return (RequestIdentity(secret: try await cache.identitySecret()), nil)
        } catch {
            return (.random(), "aggregate: warning: cannot read the cache's secret (\(PlainWords.describe(error))); this run's responses are cached for itself alone")
        }
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
