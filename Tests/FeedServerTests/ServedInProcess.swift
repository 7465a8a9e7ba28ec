import FeedConfig
import FeedCore
import FeedEngine
import FeedServer
@testable import ServeAccess
@testable import ServeHTTP
import FeedSourceTesting
import FeedState
import FeedSupport
import FixtureKit
import FixtureServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SourceCatalogue
import Testing

/// `serve` in this process: the real routes, middleware, runners and background refresh,
/// called through HummingbirdTesting's router client (no sockets: a loaded machine's
/// connection pool cannot time a test out), against the fixture server on 127.0.0.1, with
/// the refresh waiting on a ``TestClock`` the test moves on. The services run in the test
/// framework's `ServiceGroup`, stopped by graceful shutdown, also when the test throws.
/// (Connections, their limits and deadlines are tested against the process, in
/// EndToEndTests.)
struct ServedInProcess: Sendable {
    let client: any TestClientProtocol
    let clock: TestClock
    let fixture: FixtureServer
    let base: URL
    /// The server itself (``FeedServer/reload(to:)``).
    let server: FeedServer

    /// Runs `body` against a server of `sources` (their fixture routes, `extra` YAML per
    /// source id); `background` refresh on, `metrics` for `/metrics`, the state in memory
    /// unless `state` names a shared one (replicas).
    static func with(
        sources: [FixtureSourceEntry], extra: [String: String] = [:], metrics: Bool = false, state: EngineState = .inMemory(),
        access: @Sendable (EngineState) -> AccessPolicy = { _ in .open }, trustedProxies: [IPRange] = [], overSocket: Bool = false,
        maxFilteredCards: Int = FeedServer.defaultMaxFilteredCards, _ body: @Sendable (ServedInProcess) async throws -> Void
    ) async throws {
        let fixture = FixtureWorld.server()
        try await fixture.withRunning { base in
            let yaml = FixtureWorld.sourcesYml(base: base, sources: sources, extra: extra)
            let config = try ConfigLoader(registry: SourceRegistry(SourceCatalogue.sources), environment: [:]).load(text: yaml, file: "Sources.yml")
            try await serve(config: config, state: state, fixture: fixture, base: base, metrics: metrics, access: access(state),
                            trustedProxies: trustedProxies, overSocket: overSocket, maxFilteredCards: maxFilteredCards, body)
        }
    }

    /// One server of `config` on `state` (a replica, when another serves the same state).
    /// `overSocket`: through a socket on 127.0.0.1 (HummingbirdTesting's live client), where the
    /// peer is an address a `--trusted-proxy` block can hold; else through the router.
    static func serve(config: FeedConfig, state: EngineState, fixture: FixtureServer, base: URL, metrics: Bool = false,
                      access: AccessPolicy = .open, trustedProxies: [IPRange] = [], overSocket: Bool = false,
                      maxFilteredCards: Int = FeedServer.defaultMaxFilteredCards,
                      _ body: @Sendable (ServedInProcess) async throws -> Void) async throws {
        let registry = SourceRegistry(SourceCatalogue.sources)
        let live = LiveHTTPTransport()
        let shared = SharedRequests()
        let readers = StandardTransports(live: live, state: state, servesStale: true, logger: .init(label: "test"),
                                         sharedSnapshots: { [] }, sharedRequests: shared)
        let refreshes = StandardTransports(live: live, state: state, refresh: true, logger: .init(label: "test"),
                                           sharedSnapshots: { [] }, sharedRequests: shared)
        let clock = TestClock()
        let server = FeedServer(runner: FeedRunner(config: config, registry: registry, transports: readers),
                                refresher: FeedRunner(config: config, registry: registry, transports: refreshes),
                                config: config, state: state, host: "127.0.0.1", port: 0,
                                // Over a socket, the test client opens its connection first and may
                                // wait long on a loaded machine before its first request: the
                                // connection deadlines are tested in EndToEndTests, not here.
                                limits: ConnectionLimits(maxConnections: ConnectionLimits.defaults.maxConnections,
                                                         activeRequests: ConnectionLimits.defaults.activeRequests,
                                                         headerTimeout: .seconds(3600), idleTimeout: .seconds(3600)),
                                metrics: metrics,
                                logsRequests: false, access: access, trustedProxies: trustedProxies, maxFilteredCards: maxFilteredCards,
                                clock: clock, accessLog: { _ in })
        do {
            try await server.application().test(overSocket ? .live : .router) { client in
                try await body(ServedInProcess(client: client, clock: clock, fixture: fixture, base: base, server: server))
            }
        } catch {
            await live.shutdown()
            throw error
        }
        await live.shutdown()
    }

    /// GET `path` with `headers`.
    func get(_ path: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await client.execute(uri: path, method: .get, headers: headers)
    }

    /// Requests the fixture server has logged for `route`.
    func upstreamRequests(_ route: String) -> Int {
        fixture.control.requests(to: route).count
    }

    /// Moves the clock on by `seconds` and returns once each of the `sources` refresh
    /// loops is waiting again: every refresh that came due has finished.
    func refresh(after seconds: Int, sources: Int) async {
        clock.advance(by: .seconds(seconds))
        await clock.untilSleeping(sources)
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    func header(_ name: String) -> String? { HTTPField.Name(name).flatMap { headers[$0] } }
}
