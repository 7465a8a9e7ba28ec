import FeedConfig
import FeedCore
import FeedState
import Foundation
import Logging
import Synchronization

/// The ways one source can be served, tried in order: the live network (absent with
/// `--offline`), then the fallbacks its `fallback:` policy allows.
public struct TransportTier: Sendable {
    /// `nil` for the live network.
    public var origin: Card.Origin?
    public var transport: any HTTPTransport
    /// How stderr names what this tier served: `recorded snapshot`,
    /// `cached response from 12 minutes ago`. Asked after the tier has served.
    public var describe: @Sendable () -> String
    /// Told after every call of the source whether it could read what this tier served
    /// (the cache stores a response only then); answers the stored bodies the call read,
    /// by cache key, with their `storedAt` stamps: what a remembered page depends on, or,
    /// when the source could not read them, the damaged copies now dropped.
    public var settle: @Sendable (_ parsed: Bool) async -> [String: Double]
    /// Pages this tier's source mapped before, served while their responses are fresh.
    var memo: PageMemo?
    /// The live tier's cache, which tells the pager when a remembered page's body is confirmed.
    var cache: CachingTransport?

    public init(origin: Card.Origin?, transport: any HTTPTransport,
                describe: @escaping @Sendable () -> String = { "live response" },
                settle: @escaping @Sendable (_ parsed: Bool) async -> [String: Double] = { _ in [:] }) {
        self.origin = origin
        self.transport = transport
        self.describe = describe
        self.settle = settle
    }
}

/// Builds the tiers for a source. The engine's standard provider is
/// ``StandardTransports``; tests may supply their own transports.
public protocol TransportProvider: Sendable {
    /// `plugin`'s snapshots are only read when a snapshot tier is built (decoding them
    /// costs start-up time).
    func tiers(for source: SourceConfig, plugin: any FeedSource.Type) -> [TransportTier]

    /// Waits for the cache writes queued so far (``WriteBehind``).
    func finishWrites() async

    /// How `source`'s `full_content:` articles are read (nil: none are, the cards keep the
    /// source's own text).
    func articles(for source: SourceConfig) -> WholeArticles?
}

extension TransportProvider {
    public func finishWrites() async {}

    public func articles(for source: SourceConfig) -> WholeArticles? { nil }
}

/// The tiers of a real run: the live network behind the cache (unless offline), then
/// the stale cache (unless `fallback: none`), then the recorded snapshot (with
/// `fallback: snapshot`). Offline: cache, then snapshot, whatever the policy.
public struct StandardTransports: TransportProvider {
    public let live: LiveHTTPTransport?
    /// Where responses are cached and mapped pages remembered; nil keeps nothing.
    public let state: EngineState?
    public let refresh: Bool
    /// `serve`'s readers: any cached copy is served however old, so no reader waits on an
    /// upstream while a copy exists; the background refresh keeps the copies fresh.
    public let servesStale: Bool
    public let logger: Logger
    /// Every built-in source's recordings, for plugins that ship none (`json`, `exec`): a
    /// recording answers only the exact URL it was recorded from, so `users-json` pointed
    /// at reqres.in is served reqres.in's recorded pages offline, and nothing else.
    public let sharedSnapshots: @Sendable () -> [RecordedResponse]
    /// When set (`serve`), concurrent runs share identical upstream requests.
    public let sharedRequests: SharedRequests?
    /// The cache writes of every source, done behind the run: ``finishWrites()``; nil
    /// without a state.
    public let writes: WriteBehind?
    /// Hosts that could not be reached moments ago, for every source of the process.
    public let unreachable = UnreachableHosts()
    /// Whether `full_content:` articles are fetched (not by `serve`'s readers, whose cards
    /// the background refresh records: they are given the stored articles only).
    public let fetchesArticles: Bool

    /// `live == nil` means offline: no socket is ever opened. `state == nil` runs
    /// without a cache.
    public init(live: LiveHTTPTransport?, state: EngineState?, refresh: Bool = false, servesStale: Bool = false,
                logger: Logger = Logger(label: "aggregate"),
                sharedSnapshots: @escaping @Sendable () -> [RecordedResponse] = { [] },
                sharedRequests: SharedRequests? = nil, fetchesArticles: Bool = true) {
        self.live = live
        self.fetchesArticles = fetchesArticles
        self.state = state
        self.refresh = refresh
        self.servesStale = servesStale
        self.logger = logger
        self.sharedSnapshots = sharedSnapshots
        self.sharedRequests = sharedRequests
        writes = state.map { WriteBehind(cache: $0.cache, pages: $0.pageMemo, logger: logger) }
    }

    /// Waits for the cache writes of the runs so far: call it before the process exits.
    public func finishWrites() async {
        await writes?.drain()
    }

    /// A source's network: its credentials to its own origin, retries, and (in `serve`)
    /// identical requests in flight shared.
    private func network(for source: SourceConfig, upstream: any HTTPTransport) -> any HTTPTransport {
        let network = RetryingTransport(
            base: upstream, sourceID: source.id, headers: source.headers, origin: source.url,
            policy: RetryPolicy(attempts: source.retries), logger: logger, unreachable: unreachable)
        return sharedRequests.map { SharedRequestTransport(base: network, shared: $0) } ?? network
    }

    /// Articles come from the web (never a local program), public addresses only off the
    /// source's own host, through the source's network, not the HTTP cache: the card store
    /// keeps each article, fetched once per card.
    public func articles(for source: SourceConfig) -> WholeArticles? {
        guard let rule = source.fullContent else { return nil }
        let network = live.flatMap { live in
            fetchesArticles
                ? self.network(for: source, upstream: UpstreamLinkTransport(live: live, timeout: source.timeout, maxBody: source.maxBody, ownHost: source.url.host))
                : nil
        }
        return WholeArticles(rule: rule, network: network, store: state?.cards)
    }

    public func tiers(for source: SourceConfig, plugin: any FeedSource.Type) -> [TransportTier] {
        var source = source
        if servesStale { source.cacheTTL = SourceConfig.Limits.cacheTTL.upperBound }
        var tiers: [TransportTier] = []
        if let live {
            let upstream: any HTTPTransport = (plugin as? any LocalUpstreamSource.Type)?.liveTransport(settings: source.settings)
                ?? TimedLiveTransport(live: live, timeout: source.timeout, maxBody: source.maxBody)
            var network = self.network(for: source, upstream: upstream)
            var settle: @Sendable (Bool) async -> [String: Double] = { _ in [:] }
            var memo: PageMemo?
            var caching: CachingTransport?
            if let state, let writes {
                let cache = CachingTransport(network: network, store: state.cache, keys: CacheKeys(source: source, identity: state.identity),
                                             ttl: source.cacheTTL, refresh: refresh, logger: logger, writes: writes,
                                             namesBodies: source.record)
                network = cache
                settle = { await cache.settle(parsed: $0) }
                caching = cache
                // With `--refresh` every upstream is asked again; a page is served from memory
                // only once its upstream confirmed the body it was mapped from.
                memo = PageMemo(store: state.pageMemo, responses: state.cache, source: source, identity: state.identity,
                                writes: writes)
            }
            var tier = TransportTier(origin: nil, transport: network, settle: settle)
            tier.memo = memo
            tier.cache = caching
            tiers.append(tier)
        }
        if let state, live == nil || source.fallback != .none {
            let stale = StaleCacheTransport(store: state.cache, keys: CacheKeys(source: source, identity: state.identity))
            tiers.append(TransportTier(origin: .cache, transport: stale) {
                "cached response from \(Age.text(since: stale.oldestServed ?? Date()))"
            })
        }
        if live == nil || source.fallback == .snapshot {
            let borrowed = plugin.snapshots.isEmpty
            let recordings = borrowed ? sharedSnapshots() : plugin.snapshots
            tiers.append(TransportTier(origin: .snapshot, transport: SnapshotTransport(recordings, borrowed: borrowed)) { "recorded snapshot" })
        }
        return tiers
    }
}

/// `12 minutes ago`, for people.
enum Age {
    static func text(since date: Date, now: Date = Date()) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(date)))
        func unit(_ value: Int, _ name: String) -> String { "\(value) \(name)\(value == 1 ? "" : "s") ago" }
        switch seconds {
        case ..<60: return unit(seconds, "second")
        case ..<3600: return unit(seconds / 60, "minute")
        case ..<86_400: return unit(seconds / 3600, "hour")
        default: return unit(seconds / 86_400, "day")
        }
    }
}

/// Remembers the last URL a source asked for, so a failure can name it.
final class RequestTracker: HTTPTransport {
    private let base: any HTTPTransport
    private let last = Mutex<URL?>(nil)

    init(_ base: any HTTPTransport) {
        self.base = base
    }

    var lastURL: URL? { last.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        last.withLock { $0 = request.url }
        return try await base.send(request)
    }
}
