import FeedConfig
import FeedCore
import FeedSupport
import Foundation

/// Where a process keeps its state, handing out the stores a run needs. One value per
/// backend (``InMemoryState``, `SQLiteState`, `PostgresState`): callers ask it for a store
/// and never ask which database it is.
public protocol StateBackend: Sendable {
    /// The HTTP response cache.
    var cache: any ResponseCache { get }
    /// The mapped pages of sources, kept to skip mapping an unchanged response.
    var pageMemo: any PageMemoStore { get }
    /// Every card seen, with its history.
    var cards: any CardStore { get }
    /// Each person's marks on the kept cards.
    var marks: any ReadingMarkStore { get }
    /// The search index over the kept cards.
    var search: any CardSearchIndex { get }
    /// The people who can sign in to `serve`, and their tokens.
    var accounts: any AccountStore { get }
    /// Which cards people said are, or are not, one item.
    var items: any ItemDecisionStore { get }
    /// Leases between processes sharing this state, so one of them refreshes a source at a
    /// time; nil where the state is one machine's and every process refreshes for itself.
    var refreshLeases: (any RefreshLeases)? { get }
    /// Things the caller should tell the user (a damaged cache moved aside).
    var notices: [String] { get }
    /// Releases connections; the state is not used after.
    func close() async
}

/// Who refreshes which source among processes sharing one state.
public protocol RefreshLeases: Sendable {
    /// Takes (or renews) `source`'s lease for `seconds` when no other holder has it.
    func take(source: String, holder: String, seconds: Double) async throws -> Bool
}

/// How a process connects to its state.
public enum StateConnections: Sendable {
    /// One connection per file: a run of the command line reads a few rows and writes
    /// a few, and a warm run should open one connection and write nothing.
    case one
    /// A writer and a pool of readers per file: `serve`, whose requests read in parallel.
    case pool
}

/// The state one process uses: its backend, and the identity its requests are cached by.
public struct EngineState: Sendable {
    public let location: StateLocation?
    public let backend: any StateBackend
    /// How requests are named in ``cache``: keyed by its secret.
    public let identity: RequestIdentity
    /// Things the caller should tell the user (a damaged cache moved aside).
    public let notices: [String]

    public var cache: any ResponseCache { backend.cache }
    public var pageMemo: any PageMemoStore { backend.pageMemo }
    public var cards: any CardStore { backend.cards }
    public var marks: any ReadingMarkStore { backend.marks }
    public var search: any CardSearchIndex { backend.search }
    public var accounts: any AccountStore { backend.accounts }
    public var items: any ItemDecisionStore { backend.items }
    public var refreshLeases: (any RefreshLeases)? { backend.refreshLeases }

    /// The state of an opened `backend`, with the identity its cache's secret gives.
    public static func opened(_ backend: any StateBackend, at location: StateLocation?) async -> EngineState {
        let (identity, notice) = await identity(of: backend.cache)
        return EngineState(location: location, backend: backend, identity: identity,
                           notices: backend.notices + [notice].compactMap { $0 })
    }

    /// The state of an opened `backend` for a command that reads or writes only the card
    /// store (`--stored`, `history`, `store`): nothing is fetched or cached, so the cache's
    /// secret is not read (opening the cache was a third of `--stored --page 1`).
    public static func openedForCardStore(_ backend: any StateBackend, at location: StateLocation?) -> EngineState {
        EngineState(location: location, backend: backend, identity: .random(), notices: backend.notices)
    }

    /// State that lives as long as the process (tests, and runs that keep nothing).
    public static func inMemory() -> EngineState {
        EngineState(location: nil, backend: InMemoryState(), identity: .random(), notices: [])
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
        await backend.close()
    }
}

/// Why the state could not be opened.
public enum StateOpenError: Error, Sendable, CustomStringConvertible {
    /// The directory at the path could not be used, and why.
    case directory(String, String)
    /// The database server could not be used: its error, already worded for the user.
    case database(String)

    public var description: String {
        switch self {
        case .directory(let path, let reason): "cannot open the state in \(path) (\(reason))"
        case .database(let message): message
        }
    }
}
