import FeedConfig
import FeedState
import FeedStatePostgres
import FeedStateSQLite

extension EngineState {
    /// Opens the state `location` names, creating and migrating what this module owns.
    /// `connections` shapes an SQLite directory (a database server is always a pool).
    /// The one place that reads which kind of place it is: everything after asks the
    /// backend for its stores.
    public static func open(_ location: StateLocation, connections: StateConnections = .one) async throws(StateOpenError) -> EngineState {
        let backend: any StateBackend = switch location {
        case .directory(let url, let cache): try SQLiteState(directory: url, cache: cache, connections: connections)
        case .postgres(let postgres): try await PostgresState(postgres)
        }
        return await opened(backend, at: location)
    }

    /// The state at `location` for a command that uses only its card store.
    public static func openForCardStore(_ location: StateLocation) async throws(StateOpenError) -> EngineState {
        let backend: any StateBackend = switch location {
        case .directory(let url, let cache): try SQLiteState(directory: url, cache: cache, connections: .one)
        case .postgres(let postgres): try await PostgresState(postgres)
        }
        return openedForCardStore(backend, at: location)
    }
}
