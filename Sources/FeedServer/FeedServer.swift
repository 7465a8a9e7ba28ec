import ServeAccess
import ServeHTTP
import FeedConfig
import FeedCore
import FeedSupport
import FeedEngine
import FeedState
import Foundation
import Hummingbird
import ReaderPages
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

/// `aggregate serve`: the merged feed over HTTP for feed readers, through the same
/// runner, cache and fallbacks as the command line. One process, one cache, one set of
/// in-flight upstream requests shared by every reader.
public struct FeedServer: Sendable {
    let routes: FeedRoutes
    let host: String
    let port: Int
    let limits: ConnectionLimits
    let refresher: SourceRefresher?
    let accessLog: LineBuffer
    /// Watches Sources.yml (SIGHUP, changes to the file) when given.
    private let watcher: ConfigWatcher?

    /// Most kept cards a view filtered by kind or words reads: such a view reads every card
    /// of its sources (no index keeps a filter's rounds), some 4 KB and 25 µs each, so the
    /// default holds one view near 200 MB and a second; more is answered 422 (`serve
    /// --max-filtered-cards`).
    public static let defaultMaxFilteredCards = 50_000

    /// `runner` answers readers (any cached copy will do: ``StandardTransports/servesStale``);
    /// `refresher`, when given (online), revalidates every source in the background, waiting
    /// between refreshes on `clock` (a test's own clock moves it on without sleeping).
    /// `metrics` adds `/metrics`. `responseCacheBytes` bounds the rendered responses kept.
    /// `reachedAt` (`--base-url`) is never subscribed to, nor the address a request came to.
    /// `reload`, when given, is how Sources.yml is read again on SIGHUP or when it changes.
    /// `maxFilteredCards` bounds what a view filtered by kind or words reads (see
    /// ``defaultMaxFilteredCards``).
    public init(runner: FeedRunner, refresher: FeedRunner?, config: FeedConfig, state: EngineState?, host: String, port: Int,
                limits: ConnectionLimits = .defaults, metrics: Bool = false, responseCacheBytes: Int = 64 << 20,
                logsRequests: Bool = true, access: AccessPolicy = .open, trustedProxies: [IPRange] = [], metricsToken: String? = nil,
                reachedAt: URL? = nil, maxFilteredCards: Int = FeedServer.defaultMaxFilteredCards, reload: ConfigReload? = nil,
                clock: any Clock<Duration> = ContinuousClock(), accessLog: @escaping @Sendable (String) -> Void) {
        let health = SourceHealth()
        let versions = SourceVersions()
        // Without the background refresh nothing would retire a kept response: every
        // request renders, as every command-line run does.
        let responses: any RenderedResponseCache = refresher == nil ? RenderEveryTime() : InMemoryRenderedResponses(limit: responseCacheBytes)
        let serveMetrics = metrics ? ServeMetrics.enabled() : .disabled
        let lines = LineBuffer(write: accessLog)
        self.accessLog = lines
        // Not an access-log line: said whether or not requests are logged.
        let ruleTimeouts = RuleTimeoutReporter(metrics: serveMetrics, log: accessLog)
        // Readers are answered from the store the background refresh records in; without
        // the refresh, each reader's own run fetches, as a command-line run does.
        let store = refresher == nil ? nil : state?.cards
        let marks = store == nil ? nil : state?.marks
        let searchIndex = store == nil ? nil : state?.search
        let itemDecisions = store == nil ? nil : state?.items
        let refreshed = store == nil ? nil : RefreshedSources(sources: config.sources.filter(\.enabled).map(\.id))
        // What the readers' runner hands its sources to decode is counted: with the store,
        // nothing but a card lookup should be.
        let readerTransports = CountedBodies(base: runner.transports, count: { serveMetrics.bodyDecoded(by: "request") })
        let refreshTransports = refresher.map { CountedBodies(base: $0.transports, count: { serveMetrics.bodyDecoded(by: "refresh") }) }
        let registry = runner.registry
        let makeServed: @Sendable (FeedConfig) -> (ServedSources, SourceRefresher.Plan?) = { config in
            let readers = FeedRunner(config: config, registry: registry, transports: readerTransports)
            let plan = refreshTransports.map { transports in
                SourceRefresher.Plan(sources: config.sources.filter(\.enabled),
                                     runner: FeedRunner(config: config, registry: registry, transports: transports),
                                     liveRunner: FeedRunner(config: config, registry: registry, transports: LiveTierOnly(base: transports)),
                                     reader: readers, keep: { config.keepPolicy(for: $0) })
            }
            return (ServedSources(config: config, runner: readers), plan)
        }
        let (replanned, replans) = AsyncStream<Reconfiguration.Replan>.makeStream()
        // Made once at start-up: the catalogue reads every source's settings.
        let (served, plan) = makeServed(config)
        let reconfiguration = Reconfiguration(served: served, file: reload, ownAuthorities: Set(reachedAt.map { [Reconfiguration.authority(of: $0)] } ?? []), refreshed: refreshed, health: health, versions: versions,
                                              responses: responses, replans: replans, say: accessLog, makeServed: makeServed)
        routes = FeedRoutes(reconfiguration: reconfiguration, store: store, marks: marks, searchIndex: searchIndex,
                            itemDecisions: itemDecisions, refreshed: refreshed,
                            health: health, responses: responses, versions: versions, metrics: serveMetrics, ruleTimeouts: ruleTimeouts,
                            slots: RequestSlots(count: limits.activeRequests), accessLog: { lines.append($0) }, logsRequests: logsRequests,
                            access: access, trustedProxies: trustedProxies, reachedAt: reachedAt,
                            metricsToken: metricsToken, maxFilteredCards: maxFilteredCards)
        self.refresher = plan.map { plan in
            SourceRefresher(plan: plan, replans: replanned, versions: versions,
                            responses: responses, health: health, metrics: serveMetrics, ruleTimeouts: ruleTimeouts,
                            leases: state?.refreshLeases, store: store, searchIndex: searchIndex, refreshed: refreshed, say: accessLog, clock: clock)
        }
        self.host = host
        self.port = port
        self.limits = limits
        watcher = reload.map { ConfigWatcher(reconfiguration: reconfiguration, reload: $0) }
    }

    /// Serves `config` from now on (a reloaded Sources.yml): every source whose settings
    /// are unchanged keeps its refresh; the others stop or start (``Reconfiguration``).
    /// Returns what changed.
    @discardableResult
    public func reload(to config: FeedConfig) async -> ConfigChanges {
        await routes.reconfiguration.reload(to: config)
    }

    /// Why `block` may not be a `--trusted-proxy`, or nil.
    public static func problem(trusting block: IPRange) -> String? {
        ClientAddress.problem(trusting: block)
    }

    /// The `Server` header of every answer.
    static let serverName = "aggregate"

    /// Serves until SIGTERM or SIGINT, then lets requests in flight finish.
    /// `onListening` is told the port bound (useful with port 0).
    public func run(onListening: @escaping @Sendable (Int) -> Void) async throws {
        try await application(onListening: onListening).runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }

    /// The server as a Hummingbird application with its services (the background refresh,
    /// the access log), for ``run(onListening:)`` and for tests in process
    /// (HummingbirdTesting). Stopping it stops the listener first: requests in flight
    /// finish, then the refresh stops and the access log is written out.
    public func application(onListening: @escaping @Sendable (Int) -> Void = { _ in }) -> some ApplicationProtocol {
        var logger = Logger(label: "aggregate-serve")
        logger.logLevel = .critical
        // HEAD is answered on every GET route, as GET without the body (feed readers and
        // `curl -I` use it).
        let router = Router(context: ServeRequestContext.self, options: .autoGenerateHeadEndpoints)
        routes.register(on: router)
        let limits = limits
        let open = OpenConnections()
        let kept = KeptAnswers(responses: routes.responses, versions: routes.versions, metrics: routes.metrics,
                               accessLog: routes.logsRequests ? routes.accessLog : nil,
                               paths: Set(FeedRoutes.feeds.map(\.path) + ["/"]), serverName: Self.serverName,
                               answersAnyone: { [owner = routes.owner] in owner.isOpen })
        var services: [any Service] = [accessLog, routes.owner]
        if let refresher { services.append(refresher) }
        if let watcher { services.append(watcher) }
        if case .accounts = routes.access { services.append(routes.loginSessions) }
        // Kept answers skip every middleware: they answer only while nobody needs to sign
        // in (``OwnerAccess``), and never behind a trusted proxy, whose clients are told
        // apart by their forwarding headers.
        let keepsAnswers = routes.owner.isOpen && routes.trustedProxies.isEmpty
        return Application(
            router: router,
            server: .http1(configuration: HTTP1Channel.Configuration(
                // Kept answers first: the API's paths are read after them, off the warm feed's path.
                additionalChannelHandlers: [ConnectionGuard(limits: limits, open: open)]
                    + (keepsAnswers ? [KeptAnswerHandler(kept: kept)] : []) + [GoogleReaderPaths()])),
            // Past the connections it holds and the refusals it answers, the server stops
            // accepting (the kernel's backlog holds or refuses the rest): accepted sockets
            // waiting to be refused were what ran the process out of descriptors.
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: Self.serverName,
                availableConnectionsDelegate: MaximumAvailableConnections(limits.maxConnections + ConnectionLimits.answeredRefusals)),
            services: services,
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) },
            logger: logger)
    }
}

/// How each source fared on its latest request, and its background refresh, for
/// `/healthz`, response headers and `/metrics`.
actor SourceHealth {
    /// Where a source's latest answer came from.
    typealias Status = SourceStatus

    struct Entry: Encodable {
        var status: Status
        var detail: String?
        var checked: String
        /// Seconds since the source's data was last fetched from its upstream.
        var ageSeconds: Int?
        var nextRefresh: String?
        var lastError: String?
        /// `full_content:` articles the latest run that tried any could not read (the
        /// cards keep the source's own text).
        var articles: String?

        enum CodingKeys: String, CodingKey {
            case status, detail, checked, articles
            case ageSeconds = "age_seconds", nextRefresh = "next_refresh", lastError = "last_error"
        }
    }

    private var entries: [String: Entry] = [:]
    /// Why the card store could not be read by the latest reader that read it (nil when it could).
    private(set) var storeFailure: String?
    private var lastGood: [String: Date] = [:]
    private var refreshes: [String: (next: Date, error: String?)] = [:]

    /// What a reader's request found. A source the background refresh looks after is
    /// described by the refresh (a reader is served its copy, which says little).
    func record(_ outcomes: [SourceOutcome]) {
        set(outcomes.filter { refreshes[$0.id] == nil || $0.failure != nil })
    }

    private func set(_ outcomes: [SourceOutcome]) {
        let now = RFC3339.string(from: Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
        for outcome in outcomes {
            let detail: String? = switch outcome.status {
            case .live: nil
            case .fallback(_, let liveFailure, let servedBy): [liveFailure, servedBy].compactMap { $0 }.joined(separator: "; ")
            case .failed(let message, _): message
            }
            // Said until a later run tries articles again (a refresh that finds no new card tries none).
            let triedArticles = outcome.articles.map { $0.fetched + $0.failed > 0 } ?? false
            let articles = triedArticles ? outcome.articleFailure : entries[outcome.id]?.articles
            entries[outcome.id] = Entry(status: Status(outcome.status), detail: detail, checked: now, articles: articles)
        }
    }

    /// A reader read the card store (`failure` nil), or could not.
    func store(failure: String?) {
        storeFailure = failure
    }

    /// Sources no longer served (a reload removed or disabled them).
    func forget(_ sources: [String]) {
        for source in sources {
            entries[source] = nil
            lastGood[source] = nil
            refreshes[source] = nil
        }
    }

    /// A background refresh of the source ended with `outcome`; the next is at `next`.
    func refreshed(_ outcome: SourceOutcome, next: Date) {
        set([outcome])
        var error: String?
        switch outcome.status {
        case .live: lastGood[outcome.id] = Date()
        case .fallback(_, let liveFailure, _): error = liveFailure
        case .failed(let message, _): error = message
        }
        refreshes[outcome.id] = (next, error)
    }

    /// Sources whose latest refresh failed, and what their readers are given instead.
    var failing: [String: Status] {
        entries.filter { refreshes[$0.key]?.error != nil && $0.value.status != .live }.mapValues(\.status)
    }

    /// Seconds since each refreshed source's data was fetched.
    var ages: [String: Double] {
        lastGood.mapValues { Date().timeIntervalSince($0) }
    }

    var snapshot: [String: Entry] {
        var all = entries
        for (id, refresh) in refreshes {
            all[id]?.nextRefresh = RFC3339.string(from: Date(timeIntervalSince1970: refresh.next.timeIntervalSince1970.rounded(.down)))
            all[id]?.lastError = refresh.error
            all[id]?.ageSeconds = lastGood[id].map { Int(Date().timeIntervalSince($0)) }
        }
        return all
    }
}
