import FeedConfig
import FeedCore
import FeedEngine
import FeedSupport
import FixtureKit
import FixtureServer
import Foundation
import Synchronization
import Testing

/// One source alone at the fixture server, configured from its first fixture entry
/// through the real config loader, and reached over real HTTP on 127.0.0.1.
struct ConformanceWorld {
    let source: any BuiltinSource.Type

    func run(_ body: (ConformanceContext) async throws -> Void) async throws {
        let entry = try #require(source.fixtureSources.first, "\(source) has no fixture source entry")
        let server = FixtureServer.standard([source])
        let live = LiveHTTPTransport()
        do {
            try await server.withRunning { base in
                // The harness's request timeout, as every fixture test: on a loaded CI machine
                // a walk's request once outlasted the shipped 10 s.
                let yaml = FixtureWorld.sourcesYml(base: base, sources: [entry])
                let loader = ConfigLoader(registry: SourceRegistry([source]))
                let config = try loader.load(text: yaml, file: "Sources.yml")
                let sourceConfig = try #require(config.sources.first)
                let context = ConformanceContext(source: source, config: sourceConfig, route: entry.route,
                                                 server: server, transport: RecordingTransport(live: live, config: sourceConfig, source: source))
                try await body(context)
            }
        } catch {
            await live.shutdown()
            throw error
        }
        await live.shutdown()
    }
}

/// What a conformance check works with: the source's configuration and ways to walk it.
struct ConformanceContext: Sendable {
    let source: any BuiltinSource.Type
    let config: SourceConfig
    let route: String
    let server: FixtureServer
    let transport: RecordingTransport

    /// The module name, for messages (`Cabify`).
    var name: String { String(reflecting: source).split(separator: ".").first.map(String.init) ?? "\(source)" }

    func makeSource() throws -> any FeedSource {
        try source.init(settings: config.settings, http: transport)
    }

    /// Walks every page from the first, as the engine does; throws the source's error or
    /// ``SourceError/repeatedCursor(_:)``.
    func walk(budget: Int? = nil) async throws -> (cards: [Card], pages: Int) {
        let source = try makeSource()
        var trail = CursorTrail()
        var cards: [Card] = []
        var pages = 0
        repeat {
            let page = try await source.page(after: trail.current)
            pages += 1
            cards += page.cards
            if pages >= (budget ?? config.maxPages) { break }
            guard try trail.advance(to: page.next) else { break }
        } while true
        return (cards, pages)
    }

    /// The body of the newest response the source received.
    var lastBody: Data? { transport.lastBody }

    /// The body of the first page, as recorded.
    func firstBody() async throws -> Data? {
        _ = try await makeSource().page(after: nil)
        return transport.lastBody
    }

    /// Whether the source runs a program instead of fetching (`exec`): its "body" is
    /// the program's stdout, so faults replace that instead of the upstream's answer.
    var isLocal: Bool { source is any LocalUpstreamSource.Type }

    func setFaults(_ faults: [Fault]) {
        if isLocal {
            transport.setOutputFaults(faults)
        } else {
            server.control.set(route, faults)
        }
    }

    func requests() -> [LoggedRequest] {
        server.control.requests(to: route)
    }
}

/// Live HTTP with the source's configured headers and timeout, keeping the last body.
final class RecordingTransport: HTTPTransport {
    let live: LiveHTTPTransport
    let config: SourceConfig
    /// The source's type: one with a local upstream (`exec`) is run, not fetched.
    let source: any FeedSource.Type
    private let last = Mutex<Data?>(nil)

    init(live: LiveHTTPTransport, config: SourceConfig, source: any FeedSource.Type) {
        self.live = live
        self.config = config
        self.source = source
    }

    var lastBody: Data? { last.withLock { $0 } }

    /// For a local upstream: faults applied to its output, one per call, like the
    /// fixture server's per-request faults.
    private let outputFaults = Mutex<[Fault]>([])

    func setOutputFaults(_ faults: [Fault]) {
        outputFaults.withLock { $0 = faults }
    }

    private func nextOutputFault() -> Fault? {
        outputFaults.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        request.headers.merge(config.headers) { own, _ in own }
        var response = if let local = source as? any LocalUpstreamSource.Type {
            try await local.liveTransport(settings: config.settings).send(request)
        } else {
            try await live.send(request, timeout: config.timeout, maxBody: config.maxBody)
        }
        if source is any LocalUpstreamSource.Type, let fault = nextOutputFault() {
            if let body = fault.body { response.body = Data(body.utf8) }
            if fault.malformedJSON == true { response.body = response.body.prefix(response.body.count / 2) }
        }
        last.withLock { $0 = response.body }
        return response
    }
}
