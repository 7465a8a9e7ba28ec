import Foundation

/// A ``ResponseCache`` in memory, for tests and for runs that keep nothing.
public actor InMemoryResponseCache: ResponseCache {
    private var responses: [String: CachedResponse] = [:]
    private let secret = RequestIdentity.newSecret()

    public init() {}

    public func response(forKey key: String) -> CachedResponse? {
        responses[key]
    }

    public func put(_ response: CachedResponse) {
        responses[response.key] = response
    }

    public func touch(key: String, fetchedAt: Date, maxAge: Double?) {
        responses[key]?.fetchedAt = fetchedAt
        responses[key]?.maxAge = maxAge
    }

    public func forget(key: String) {
        responses[key] = nil
    }

    public func stamp(key: String) -> CacheStamp? {
        responses[key].map(CacheStamp.init)
    }

    public func identitySecret() -> Data {
        secret
    }
}

/// A ``PageMemoStore`` in memory.
public actor InMemoryPageMemoStore: PageMemoStore {
    private var pages: [String: MappedPageRecord] = [:]

    public init() {}

    public func page(forKey key: String) -> MappedPageRecord? {
        pages[key]
    }

    public func put(_ page: MappedPageRecord) {
        pages[page.key] = page
        pages = pages.filter { $0.value.created.timeIntervalSince(page.created) > -MappedPageRecord.lifetime }
    }
}

/// State in memory, for tests and runs that keep nothing: it lives as long as the value.
public struct InMemoryState: StateBackend {
    public let cache: any ResponseCache = InMemoryResponseCache()
    public let pageMemo: any PageMemoStore = InMemoryPageMemoStore()
    private let kept = InMemoryCardStore()
    public var cards: any CardStore { kept }
    public var marks: any ReadingMarkStore { kept }
    public var search: any CardSearchIndex { kept }
    public let accounts: any AccountStore = InMemoryAccounts()
    public let items: any ItemDecisionStore = InMemoryItemDecisions()
    /// One process's state: nobody to share a refresh with.
    public var refreshLeases: (any RefreshLeases)? { nil }
    public var notices: [String] { [] }

    public init() {}

    public func close() async {}
}
