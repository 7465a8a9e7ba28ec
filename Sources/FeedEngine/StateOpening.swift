import Foundation
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

/// `aggregate backup` and `aggregate restore`: the state's databases in one file. A
/// PostgreSQL state is backed up by PostgreSQL's own tools, which the failure names.
public enum StateBackups {
    /// Why nothing was backed up or restored.
    public enum Failure: Error, CustomStringConvertible {
        case directory(StateBackupFailure)
        /// The state is a database server's: `pg_dump` and `pg_restore` are the tools.
        case database(PostgresLocation)

        public var description: String {
            switch self {
            case .directory(let failure): failure.description
            case .database(let location):
                "the state is in PostgreSQL (\(location)): back it up with `pg_dump --format=custom --file=aggregate.dump URL` "
                    + "and restore it into an empty database with `pg_restore --dbname=URL aggregate.dump` (docs/operations.md)"
            }
        }

        /// Whether the fault is in the request (exit 2) rather than the machine.
        public var isUsage: Bool {
            if case .directory(let failure) = self { failure.isUsage } else { true }
        }
    }

    /// Writes the state at `location` to `file`; the databases it holds, by name.
    public static func backUp(_ location: StateLocation, to file: URL) throws(Failure) -> [String] {
        switch location {
        case .directory(let url, _):
            do { return try SQLiteStateDirectory.backUp(url, to: file) } catch { throw .directory(error) }
        case .postgres(let postgres): throw .database(postgres)
        }
    }

    /// Reads `file` into the state at `location`, which must hold none yet.
    public static func restore(_ location: StateLocation, from file: URL) throws(Failure) -> [String] {
        switch location {
        case .directory(let url, _):
            do { return try SQLiteStateDirectory.restore(from: file, into: url) } catch { throw .directory(error) }
        case .postgres(let postgres): throw .database(postgres)
        }
    }
}
