import ServeAccess
import ServeHTTP
import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import FeedState
import FeedSupport
import Foundation
import ReaderPages
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import HummingbirdCore
import NIOCore


/// A card's own route, `/cards/{id}` (its page or its JSON line), and the operator's
/// answers: the source list and `/healthz`.
extension FeedRoutes {
    func card(_ request: Request, id: String, client: String, person: Int, signedIn: String?) async -> Response {
        let result: FeedRunner.ShowResult
        if let message = await detailGuard.knownMissing(id) { return Problem.notFound(message).response }
        let source = String(id.prefix { $0 != ":" })
        // A card found lately is answered from memory: no upstream request, so no token.
        if let kept = await detailGuard.keptCard(id) {
            result = kept
        } else {
            // Only configured sources have a bucket (any other id is answered without a request).
            if config.sources.contains(where: { $0.id == source }), let refusal = await detailGuard.admit(source, client: client) {
                let seconds = max(1, Int((Double(refusal.wait.components.seconds) + Double(refusal.wait.components.attoseconds) / 1e18).rounded(.up)))
                let whose = refusal.byClient ? "too many card lookups from your address" : "too many card lookups at once"
                var response = Problem(title: "Too Many Requests", status: 429,
                                       detail: "\(source): \(whose); try again in \(seconds) s").response
                response.headers[.retryAfter] = String(seconds)
                return response
            }
            do {
                result = try await runner.show(id)
            } catch {
                return Problem.notFound(error.description).response
            }
            // A live answer is kept for the source's cache_ttl (a fallback's, not at all).
            if case .found(_, let outcome) = result, outcome.failure == nil, outcome.origin == nil,
               let ttl = config.source(id: source)?.cacheTTL, ttl > 0 {
                await detailGuard.keep(id, result, for: .milliseconds(Int(ttl * 1000)))
            }
        }
        switch result {
        case .found(let card, let outcome) where Form.wantsHTML(request):
            await health.record([outcome])
            let degraded = await degraded([outcome], sources: [card.source])
            let hasDetail = outcome.detail == nil
            if readsMarks, let page = await keptPage(request, card: card, hasDetail: hasDetail, degraded: degraded, person: person, signedIn: signedIn) { return page }
            let html = ReaderPage.detail(card, hasDetail: hasDetail, config: config, degraded: degraded, now: Date())
            var response = HTTPAnswer(body: Array(html.utf8), contentType: "text/html; charset=utf-8", lastModified: card.published,
                                      maxAge: maxAge(FeedQuery(sourceIDs: [card.source]))).response(to: request)
            response.headers[.vary] = "Accept, Accept-Encoding"
            return response
        case .found(let card, let outcome):
            await health.record([outcome])
            var response = HTTPAnswer(body: Array(JSONLines.line(for: card).utf8) + [UInt8(ascii: "\n")],
                                      contentType: "application/json", lastModified: card.published,
                                      maxAge: maxAge(FeedQuery(sourceIDs: [card.source]))).response(to: request)
            if let degraded = Self.degradedHeader([outcome]) { response.headers[.aggregateDegraded] = degraded }
            return response
        case .notFound(let message, _):
            // Gone upstream, still kept: its page from the store.
            if readsMarks, Form.wantsHTML(request), let kept = try? await store?.card(id: id),
               let page = await keptPage(request, card: kept.card, hasDetail: false, degraded: [:], person: person, signedIn: signedIn) {
                return page
            }
            await detailGuard.rememberMissing(id, message: message)
            return Problem.notFound(message).response
        case .failed(let outcome):
            await health.record([outcome])
            return Problem(title: "Bad Gateway", status: 502, detail: "\(outcome.id): \(outcome.failure ?? "failed")").response
        }
    }

    func sources(_ request: Request) -> Response {
        let rows = config.sources.map { SourceListing($0, everySource: config.filters) }
        return HTTPAnswer(body: Self.json(rows), contentType: "application/json", lastModified: nil, maxAge: nil)
            .response(to: request)
    }

    struct Health: Encodable {
        var status: String
        var sources: [String: SourceHealth.Entry]
        /// The running configuration: when it was loaded, and why the file does not load
        /// now, if it does not.
        var config: ConfigStatus.Snapshot?
        /// Why the card store could not be read by the latest reader, while it cannot.
        var store: String?
    }

    func healthz(_ request: Request, detailed: Bool) async -> Response {
        let sources = await health.snapshot
        let store = await health.storeFailure
        let config = reconfiguration.status.snapshot
        let degraded = sources.values.contains { $0.status != .live } || config.error != nil || store != nil
        let health = Health(status: degraded ? "degraded" : "ok", sources: detailed ? sources : [:], config: detailed ? config : nil,
                            store: detailed ? store : nil)
        return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: Self.json(health))))
    }
}
