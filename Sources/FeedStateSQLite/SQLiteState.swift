import FeedCore
import FeedState
import FeedSupport
import Foundation

/// State in an SQLite directory: one machine's (``SQLiteStateDirectory``).
public struct SQLiteState: StateBackend {
    public let directory: SQLiteStateDirectory
    public let cache: any ResponseCache
    public let pageMemo: any PageMemoStore
    /// The card store, its marks and its search index, all in `cards.sqlite`.
    let kept: SQLiteCardStore
    public var cards: any CardStore { kept }
    public var marks: any ReadingMarkStore { kept }
    public var search: any CardSearchIndex { kept }
    public var items: any ItemDecisionStore { kept }
    public let accounts: any AccountStore
    /// Every process on the machine refreshes for itself (no leases).
    public var refreshLeases: (any RefreshLeases)? { nil }
    public var notices: [String] { directory.notices }

    /// Opens (creating on first use) the state in `url`.
    /// `cache`: the HTTP cache's own directory (else `url`).
    public init(directory url: URL, cache cacheURL: URL? = nil, connections: StateConnections = .one) throws(StateOpenError) {
        do {
            directory = try SQLiteStateDirectory(directory: url, cache: cacheURL, connections: connections)
        } catch {
            throw .directory(url.path, PlainWords.describe(error))
        }
        cache = SQLiteResponseCache(directory)
        pageMemo = SQLitePageMemoStore(directory)
        kept = SQLiteCardStore(directory)
        accounts = SQLiteAccounts(directory)
    }

    /// Connections close with the last reference.
    public func close() async {}
}
