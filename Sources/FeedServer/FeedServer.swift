import FeedCore
import FeedEngine
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle

/// `aggregate serve`: the merged feed over HTTP for feed readers, through the same
/// runner, cache and fallbacks as the command line. One process, one cache, one set of
/// in-flight upstream requests shared by every reader.
public struct FeedServer: Sendable {
    let routes: FeedRoutes
    let host: String
    let port: Int
    let limits: ConnectionLimits

    public init(runner: FeedRunner, config: FeedConfig, firstSeen: (any FirstSeenLog)?, host: String, port: Int,
                limits: ConnectionLimits = .defaults, accessLog: @escaping @Sendable (String) -> Void) {
        routes = FeedRoutes(runner: runner, config: config, firstSeenLog: firstSeen, health: SourceHealth(), accessLog: accessLog)
        self.host = host
        self.port = port
        self.limits = limits
    }

    /// Serves until SIGTERM or SIGINT, then lets requests in flight finish.
    /// `onListening` is told the port bound (useful with port 0).
    public func run(onListening: @escaping @Sendable (Int) -> Void) async throws {
        var logger = Logger(label: "aggregate-serve")
        logger.logLevel = .critical
        // HEAD is answered on every GET route, as GET without the body (feed readers and
        // `curl -I` use it).
        let router = Router(options: .autoGenerateHeadEndpoints)
        routes.register(on: router, slots: RequestSlots(count: limits.activeRequests))
        let limits = limits
        let open = OpenConnections()
        let app = Application(
            router: router,
            server: .http1(configuration: HTTP1Channel.Configuration(
                additionalChannelHandlers: [ConnectionGuard(limits: limits, open: open)])),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "aggregate"),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) },
            logger: logger)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: app)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// How each source fared on its latest request, for `/healthz` and response headers.
actor SourceHealth {
    struct Entry: Encodable {
        var status: String
        var detail: String?
        var checked: String
    }

    private var entries: [String: Entry] = [:]

    func record(_ outcomes: [SourceOutcome]) {
        let now = RFC3339.string(from: Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
        for outcome in outcomes {
            switch outcome.status {
            case .live: entries[outcome.id] = Entry(status: "live", detail: nil, checked: now)
            case .fallback(let origin, let liveFailure, let servedBy):
                entries[outcome.id] = Entry(status: origin.rawValue, detail: [liveFailure, servedBy].compactMap { $0 }.joined(separator: "; "), checked: now)
            case .failed(let message, _): entries[outcome.id] = Entry(status: "failed", detail: message, checked: now)
            }
        }
    }

    var snapshot: [String: Entry] { entries }
}
