import FeedCore
import FixtureKit
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOFoundationCompat
import ServiceLifecycle

/// A real HTTP server on 127.0.0.1 that plays the upstreams from recorded responses,
/// with per-route faults (``Fault``) and a request log (``FixtureControl``). Used by the
/// end-to-end tests, the benchmarks and offline demos.
public final class FixtureServer: Sendable {
    public let upstreams: [any FixtureUpstream]
    public let control: FixtureControl
    /// `--scale N`: lists replicated N-fold (1 = the recordings as they are).
    public let scaling: ListScaling
    /// The loopback address it listens on (another than 127.0.0.1 plays a second host).
    public let host: String

    public init(upstreams: [any FixtureUpstream], control: FixtureControl = FixtureControl(), scale: Int = 1, host: String = "127.0.0.1") {
        self.upstreams = upstreams
        self.control = control
        self.scaling = ListScaling(factor: scale)
        self.host = host
    }

    /// Starts on an ephemeral port, runs `body` with the base URL, and shuts the server
    /// down gracefully afterwards, also when `body` throws.
    public func withRunning<T: Sendable>(_ body: (URL) async throws -> T) async throws -> T {
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let app = application(port: 0) { portSink.yield($0) }
        var configuration = ServiceGroupConfiguration(services: [.init(service: app)], logger: Logger(label: "fixture-server"))
        // A client that never finishes its request (a test's child stopped mid-upload, say)
        // would hold a graceful shutdown for ever: after 30 s it becomes cancellation.
        configuration.maximumGracefulShutdownDuration = .seconds(30)
        let group = ServiceGroup(configuration: configuration)
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw FixtureServerError.didNotStart }
            let result: Result<T, any Error>
            do {
                result = .success(try await body(URL(string: "http://\(host):\(port)")!))
            } catch {
                result = .failure(error)
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return try result.get()
        }
    }

    /// Runs until SIGINT or SIGTERM, calling `onListening` with the bound port.
    public func run(port: Int, onListening: @escaping @Sendable (Int) -> Void) async throws {
        let app = application(port: port, onListening: onListening)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: app)], gracefulShutdownSignals: [.sigint, .sigterm],
            logger: Logger(label: "fixture-server")))
        try await group.run()
    }

    private func application(port: Int, onListening: @escaping @Sendable (Int) -> Void) -> some ApplicationProtocol {
        let router = Router()
        router.get("**") { request, _ in await self.respond(to: request) }
        router.post("**") { request, _ in await self.control(request) }
        var logger = Logger(label: "fixture-server")
        logger.logLevel = .critical
        return Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "fixture-server"),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) },
            logger: logger)
    }

    private func respond(to request: Request) async -> Response {
        let arrival = Date()
        let path = request.uri.path
        let headers = request.headers.reduce(into: [String: String]()) { $0[$1.name.canonicalName] = $1.value }
        let baseURL = URL(string: "http://\(request.head.authority ?? "127.0.0.1")")!
        if path == "/_fixture/requests" {
            let body = (try? Self.encoder.encode(control.requests)) ?? Data()
            return Self.response(FixtureResponse.json(body), headers: [:])
        }
        if path.hasPrefix("/_sink/") {
            let body = (try? Self.encoder.encode(control.deliveries(to: String(path.dropFirst("/_sink/".count))))) ?? Data()
            return Self.response(FixtureResponse.json(body), headers: [:])
        }
        let segments = path.split(separator: "/", maxSplits: 1)
        let upstream = upstreams.first { $0.name == segments.first.map(String.init) }
        let route = upstream?.name ?? "unknown"
        let fault = control.nextFault(for: route)
        let query = request.uri.queryParameters.reduce(into: [String: String]()) { $0[String($1.key)] = String($1.value) }
        let inner = FixtureRequest(path: "/" + (segments.count > 1 ? segments[1] : ""), query: query,
                                   baseURL: baseURL.appendingPathComponent(route), headers: headers)
        var answer = upstream?.respond(to: inner) ?? .notFound
        if answer.status == 200 {
            answer.body = scaling.apply(to: answer.body, key: "\(request.uri)")
            answer.body = DataEdit.apply(control.edits(for: route), to: answer.body)
        }
        let response = await FaultInjector(fault: fault, request: headers, requestURI: "\(request.uri)")
            .apply(to: answer) { [control] status in
                control.record(LoggedRequest(route: route, path: path, query: request.uri.query, headers: headers,
                                             arrival: arrival, finish: Date(), status: status))
            }
        return response
    }

    /// `POST /_fixture/edits/<route>` with a JSON list of ``DataEdit``s adds them;
    /// an empty list clears the route's edits. `POST /_sink/NAME` is a webhook receiver
    /// for delivery tests: it keeps what it accepts (``FixtureControl/deliveries(to:)``) and
    /// fails on demand through the faults of route `sink-NAME` (status, latency); with
    /// `redirectTo` it answers that redirect (`status`, 302 by default) and keeps nothing;
    /// with `oversizeBytes` it accepts and answers 200 with a body that large.
    private func control(_ request: Request) async -> Response {
        let path = request.uri.path
        if path.hasPrefix("/_sink/") {
            let sink = String(path.dropFirst("/_sink/".count))
            let fault = control.nextFault(for: "sink-\(sink)")
            // A body cut short (the sender killed mid-request) is no delivery: a receiver
            // acts on whole requests only.
            let announced = request.headers[.contentLength].flatMap { Int($0) }
            guard let buffer = try? await request.body.collect(upTo: 4 << 20), announced.map({ $0 == buffer.readableBytes }) ?? true else {
                return Self.response(FixtureResponse(status: 400, body: Data("the request body did not arrive whole\n".utf8)), headers: [:])
            }
            let body = String(buffer: buffer)
            if let latency = fault.latencyMs { try? await Task.sleep(for: .milliseconds(latency)) }
            if let location = fault.redirectTo {
                return Self.response(FixtureResponse(status: fault.status ?? 302, body: Data("moved\n".utf8)), headers: ["Location": location])
            }
            if let status = fault.status {
                return Self.response(FixtureResponse(status: status, body: Data("the sink fails on purpose (\(status))\n".utf8)),
                                     headers: fault.retryAfter.map { ["Retry-After": $0] } ?? [:])
            }
            let headers = request.headers.reduce(into: [String: String]()) { $0[$1.name.canonicalName] = $1.value }
            control.record(SinkDelivery(sink: sink, idempotencyKey: headers["idempotency-key"], headers: headers, body: body,
                                        arrival: Date()))
            if let size = fault.oversizeBytes {
                return Self.response(FixtureResponse(status: 200, body: Data(repeating: UInt8(ascii: "x"), count: size)), headers: [:])
            }
            return Self.response(FixtureResponse(status: 200, body: Data(#"{"ok":true}"#.utf8)), headers: [:])
        }
        guard path.hasPrefix("/_fixture/edits/"), let body = try? await request.body.collect(upTo: 1 << 20),
              let edits = try? JSONDecoder().decode([DataEdit].self, from: Data(buffer: body)) else {
            return Self.response(FixtureResponse(status: 400, body: Data(#"{"error":"POST /_fixture/edits/<route> with a JSON list of edits"}"#.utf8)), headers: [:])
        }
        let route = String(path.dropFirst("/_fixture/edits/".count))
        if edits.isEmpty { control.clearEdits(route) }
        for edit in edits { control.edit(route, edit) }
        return Self.response(FixtureResponse(status: 200, body: Data(#"{"ok":true}"#.utf8)), headers: [:])
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    static func response(_ answer: FixtureResponse, headers extra: [String: String]) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = answer.contentType
        for (name, value) in extra {
            if let name = HTTPField.Name(name) { fields[name] = value }
        }
        return Response(status: .init(code: answer.status), headers: fields,
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}

public enum FixtureServerError: Error {
    case didNotStart
    /// Thrown mid-body on purpose, so the connection closes short of Content-Length.
    case truncated
}
