import FeedConfig
import FeedState
import Foundation

/// State in a PostgreSQL database, shared by hosts (``PostgresStateDatabase``).
public struct PostgresState: StateBackend {
    public let database: PostgresStateDatabase
    private let store: PostgresResponseCache

    public var cache: any ResponseCache { store }
    public var pageMemo: any PageMemoStore { store }
    public var cards: any CardStore { PostgresCardStore(database) }
    public var marks: any ReadingMarkStore { PostgresCardStore(database) }
    public var search: any CardSearchIndex { PostgresCardStore(database) }
    public var accounts: any AccountStore { PostgresAccounts(database) }
    public var items: any ItemDecisionStore { PostgresCardStore(database) }
    /// Replicas on one database take turns refreshing a source.
    public var refreshLeases: (any RefreshLeases)? { PostgresRefreshLeases(database) }
    public var notices: [String] { [] }

    /// Connects, and creates or migrates the cache's tables.
    public init(_ location: PostgresLocation) async throws(StateOpenError) {
        do {
            database = try await PostgresStateDatabase(location)
        } catch {
            throw .database(error.description)
        }
        store = PostgresResponseCache(database)
        do {
            try await store.migrate()
        } catch {
            await database.close()
            throw .database(error.description)
        }
    }

    public func close() async {
        await database.close()
    }
}

extension PostgresRefreshLeases: RefreshLeases {}
