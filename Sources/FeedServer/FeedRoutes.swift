import CompressNIO
import FeedCore
import FeedEngine
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The routes of `aggregate serve`.
struct FeedRoutes: Sendable {
    let runner: FeedRunner
    let config: FeedConfig
    /// When each undated card was first seen (feed entries need a date that does not move).
    let firstSeenLog: (any FirstSeenLog)?
    let health: SourceHealth
    let detailGuard = DetailGuard()
    let accessLog: @Sendable (String) -> Void

    /// Feed routes and the format each serves.
    static let feeds: [(path: String, format: any CardFormat.Type)] = [
        ("/feed.atom", AtomFormat.self), ("/feed.json", JSONFeedFormat.self),
        ("/feed.rss", RSSFormat.self), ("/feed.jsonl", JSONLinesFormat.self),
    ]

    func register(on router: Router<BasicRequestContext>, slots: RequestSlots) {
        router.add(middleware: AccessLog(write: accessLog))
        router.add(middleware: SlotMiddleware(slots: slots))
        router.add(middleware: ProblemForUnknownRoutes())
        for (path, format) in Self.feeds {
            router.get(RouterPath(path)) { request, _ in await self.feed(request, format: format) }
        }
        router.get("/cards/:id") { request, context in
            // `/cards/users%3A2` is `users:2`.
            let raw = context.parameters.get("id") ?? ""
            return await self.card(request, id: raw.removingPercentEncoding ?? raw)
        }
        router.get("/sources") { request, _ in self.sources(request) }
        router.get("/sources.opml") { request, _ in
            // Every source a reader can subscribe to: feeds by their own URL, the others by ours.
            let base = request.head.authority.map { "http://\($0)" }
            return HTTPAnswer(body: Array(OPML.document(of: config, registry: runner.registry, servedAt: base).utf8), contentType: "text/x-opml; charset=utf-8",
                              lastModified: nil, maxAge: nil).response(to: request)
        }
        router.get("/healthz") { request, _ in await self.healthz(request) }
        router.get("/") { request, _ in IndexPage.response(config: config, request: request) }
    }

    private func feed(_ request: Request, format: any CardFormat.Type) async -> Response {
        let query: FeedQuery
        do {
            query = try FeedRequest.query(request, config: config)
        } catch {
            return error.problem.response
        }
        let result: FeedResult
        do {
            result = try await runner.run(query)
        } catch {
            return Problem.badParameter("source", error.description).response
        }
        await health.record(result.outcomes)
        if result.cards.isEmpty, !result.outcomes.isEmpty, result.outcomes.allSatisfy({ $0.failure != nil }) {
            let failures = result.outcomes.map { "\($0.id): \($0.failure ?? "failed")" }.joined(separator: "; ")
            return Problem(title: "Bad Gateway", status: 502, detail: failures).response
        }
        let info = config.feed.narrowed(by: request.uri.query, selfURL: Self.selfURL(request))
        var firstSeen: [String: Date] = [:]
        if format.isFeed, let firstSeenLog {
            do {
                firstSeen = try await firstSeenLog.firstSeen(undatedIn: result.cards)
            } catch {
                accessLog("aggregate: cannot record when cards were first seen (\(PlainWords.describe(error))); undated entries carry the feed's date")
            }
        }
        let document = FeedDocument(cards: result.cards, info: info, firstSeen: firstSeen)
        var out = FormattedOutput()
        format.init().write(document, to: &out)
        let lastModified = Self.lastModified(result.cards, firstSeen: firstSeen)
        var response = HTTPAnswer(body: out.finish(), contentType: format.mediaType, lastModified: lastModified,
                                  maxAge: maxAge(query)).response(to: request)
        if let degraded = Self.degradedHeader(result.outcomes) { response.headers[.aggregateDegraded] = degraded }
        return response
    }

    private func card(_ request: Request, id: String) async -> Response {
        let result: FeedRunner.ShowResult
        if let message = await detailGuard.knownMissing(id) { return Problem.notFound(message).response }
        // Only configured sources have a bucket (any other id is answered without a request).
        let source = String(id.prefix { $0 != ":" })
        if config.sources.contains(where: { $0.id == source }), let wait = await detailGuard.admit(source) {
            let seconds = max(1, Int((Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18).rounded(.up)))
            var response = Problem(title: "Too Many Requests", status: 429,
                                   detail: "\(source): too many card lookups at once; try again in \(seconds) s").response
            response.headers[.retryAfter] = String(seconds)
            return response
        }
        do {
            result = try await runner.show(id)
        } catch {
            return Problem.notFound(error.description).response
        }
        switch result {
        case .found(let card, let outcome):
            await health.record([outcome])
            var response = HTTPAnswer(body: Array(JSONLines.line(for: card).utf8) + [UInt8(ascii: "\n")],
                                      contentType: "application/json", lastModified: card.published,
                                      maxAge: maxAge(FeedQuery(sourceIDs: [card.source]))).response(to: request)
            if let degraded = Self.degradedHeader([outcome]) { response.headers[.aggregateDegraded] = degraded }
            return response
        case .notFound(let message, _):
            await detailGuard.rememberMissing(id, message: message)
            return Problem.notFound(message).response
        case .failed(let outcome):
            await health.record([outcome])
            return Problem(title: "Bad Gateway", status: 502, detail: "\(outcome.id): \(outcome.failure ?? "failed")").response
        }
    }

    private func sources(_ request: Request) -> Response {
        let rows = config.sources.map { SourceListing($0, everySource: config.filters) }
        return HTTPAnswer(body: Self.json(rows), contentType: "application/json", lastModified: nil, maxAge: nil)
            .response(to: request)
    }

    private struct Health: Encodable {
        var status: String
        var sources: [String: SourceHealth.Entry]
    }

    private func healthz(_ request: Request) async -> Response {
        let sources = await health.snapshot
        let degraded = sources.values.contains { $0.status != "live" }
        return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: Self.json(Health(status: degraded ? "degraded" : "ok", sources: sources)))))
    }

    /// The shortest `cache_ttl` of the sources a query reads: no reader should keep the
    /// feed longer than its freshest source.
    private func maxAge(_ query: FeedQuery) -> Int? {
        let ids = query.sourceIDs.isEmpty ? config.sources.filter(\.enabled).map(\.id) : query.sourceIDs
        return ids.compactMap { config.source(id: $0)?.cacheTTL }.min().map { Int($0) }
    }

    static func json<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((try? encoder.encode(value)) ?? Data("{}".utf8)) + [UInt8(ascii: "\n")]
    }

    /// `ltk=cache, users=failed`: the sources this response did not get live.
    static func degradedHeader(_ outcomes: [SourceOutcome]) -> String? {
        let degraded = outcomes.compactMap { outcome -> String? in
            switch outcome.status {
            case .live: nil
            case .fallback(let origin, _, _): "\(outcome.id)=\(origin.rawValue)"
            case .failed: "\(outcome.id)=failed"
            }
        }
        return degraded.isEmpty ? nil : degraded.joined(separator: ", ")
    }

    static func lastModified(_ cards: some Collection<Card>, firstSeen: [String: Date]) -> Date? {
        cards.compactMap { $0.published ?? firstSeen[$0.id] }.max()
    }

    /// The URL the reader asked for, query included (a filtered feed is a feed of its own).
    static func selfURL(_ request: Request) -> URL? {
        guard let authority = request.head.authority else { return nil }
        let query = request.uri.query.map { $0.isEmpty ? "" : "?\($0)" } ?? ""
        return URL(string: "http://\(authority)\(request.uri.path)\(query)")
    }
}

extension HTTPField.Name {
    /// Names the sources a response was not served live: `ltk=cache, users=failed`.
    static let aggregateDegraded = HTTPField.Name("X-Aggregate-Degraded")!
}

/// A 200 answer with its validators: answered with 304 when the reader already has it,
/// gzip-compressed when the reader accepts it.
struct HTTPAnswer {
    var body: [UInt8]
    var contentType: String
    var lastModified: Date?
    var maxAge: Int?

    func response(to request: Request) -> Response {
        // Strong validators of the exact bytes (FNV-1a 64 of the body, hashed once): the
        // gzip representation is other bytes, so it has a tag of its own (RFC 9110 §8.8.3).
        let hash = String(FNV1a.hash(body), radix: 16)
        var buffer = ByteBuffer(bytes: body)
        var compressed: ByteBuffer?
        if Self.acceptsGzip(request), body.count > 256 { compressed = try? buffer.compress(with: .gzip()) }
        let etag = compressed == nil ? "\"\(hash)\"" : "\"\(hash)-gzip\""
        var headers: HTTPFields = [.contentType: contentType, .eTag: etag, .vary: "Accept-Encoding"]
        if let lastModified { headers[.lastModified] = HTTPDate.string(from: lastModified) }
        if let maxAge { headers[.cacheControl] = "max-age=\(maxAge)" }
        if notModified(request, etag: etag) {
            return Response(status: .notModified, headers: headers)
        }
        if let compressed {
            headers[.contentEncoding] = "gzip"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: compressed))
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: buffer))
    }

    /// RFC 9110 §13.1: `If-None-Match` decides when present; else `If-Modified-Since`.
    private func notModified(_ request: Request, etag: String) -> Bool {
        if let tags = request.headers[.ifNoneMatch] {
            return tags == "*" || tags.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces)
                .replacingOccurrences(of: "W/", with: "") == etag }
        }
        if let since = request.headers[.ifModifiedSince].flatMap(HTTPDate.date(from:)), let lastModified {
            return lastModified.timeIntervalSince1970.rounded(.down) <= since.timeIntervalSince1970
        }
        return false
    }

    static func acceptsGzip(_ request: Request) -> Bool {
        guard let accepted = request.headers[.acceptEncoding] else { return false }
        return accepted.split(separator: ",").contains { part in
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            return fields.first?.lowercased() == "gzip" && !fields.dropFirst().contains { $0.replacingOccurrences(of: " ", with: "") == "q=0" }
        }
    }
}

/// An unknown route is answered like every other error: an RFC 9457 problem, not an
/// empty body.
struct ProblemForUnknownRoutes<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            return Problem.notFound("no such route: \(request.uri.path) (see / for the feeds)").response
        }
    }
}

/// One line per request on stderr: `GET /feed.atom?per_page=50 200 12.3 ms`.
struct AccessLog<Context: RequestContext>: RouterMiddleware {
    let write: @Sendable (String) -> Void

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(request, status: response.status.code, since: start)
            return response
        } catch let error as HTTPError {
            log(request, status: error.status.code, since: start)
            throw error
        }
    }

    private func log(_ request: Request, status: Int, since start: ContinuousClock.Instant) {
        let elapsed = start.duration(to: .now)
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        write("\(request.method) \(request.uri) \(status) \(String(format: "%.1f", milliseconds)) ms")
    }
}
