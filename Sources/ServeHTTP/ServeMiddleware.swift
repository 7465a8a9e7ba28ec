import FeedSupport
import Foundation
import HTTPTypes
import Hummingbird

/// An unknown route is answered like every other error: an RFC 9457 problem, not an
/// empty body.
package struct ProblemForUnknownRoutes<Context: RequestContext>: RouterMiddleware {
    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            return Problem.notFound("no such route: \(request.uri.path) (see / for the feeds)").response
        }
    }

    package init() {}
}

/// One line per request on stderr: `GET /feed.atom?per_page=50 200 12.3 ms`.
package struct AccessLog<Context: RequestContext>: RouterMiddleware {
    /// Nil: no line, the metrics only.
    package let write: (@Sendable (String) -> Void)?
    package let metrics: ServeMetrics

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(request, route: context.endpointPath, status: response.status.code, since: start)
            return response
        } catch let error as HTTPError {
            log(request, route: context.endpointPath, status: error.status.code, since: start)
            throw error
        }
    }

    /// `route` is the router's endpoint path (`/cards/{id}`, not a card's id; `NotFound` for
    /// a path no route serves), set once the router resolved the request.
    private func log(_ request: Request, route: String?, status: Int, since start: ContinuousClock.Instant) {
        let elapsed = start.duration(to: .now)
        metrics.request(route: route ?? "NotFound", status: status, duration: elapsed)
        write?(AccessLine.text(method: request.method, target: "\(request.uri)", status: status, elapsed: elapsed))
    }

    package init(write: (@Sendable (String) -> Void)?, metrics: ServeMetrics) {
        self.write = write
        self.metrics = metrics
    }
}

/// One access-log line, the same from the router and from the kept-answer handler.
package enum AccessLine {
    /// `GET /feed.atom?per_page=50 200 12.3 ms`.
    package static func text(method: HTTPRequest.Method, target: String, status: Int, elapsed: Duration) -> String {
        // Tenths of a millisecond, formatted by hand (String(format:) was a tenth of a cached answer).
        let tenths = elapsed.components.seconds * 10_000 + elapsed.components.attoseconds / 100_000_000_000_000
        return "\(method) \(redacted(target)) \(status) \(tenths / 10).\(tenths % 10) ms"
    }

    /// The target with every secret replaced: the value of a parameter whose name marks
    /// a secret (``Redaction/isSecretParameter(_:)``: `token`, `Passwd`, `api_key`…), or
    /// is Google Reader's `T`, read case-insensitively after percent-decoding; and any
    /// segment of the path or the query that holds an API token (`agg_…`), in any
    /// spelling. A sign-in never reaches a log.
    package static func redacted(_ target: String) -> String {
        // The common case, a path and query with nothing to hide, is returned as it came.
        let lowered = target.lowercased()
        guard lowered.contains("agg") || lowered.contains("%") || lowered.contains("?") else { return target }
        let question = target.firstIndex(of: "?")
        let path = String(target[..<(question ?? target.endIndex)])
        var out = path.split(separator: "/", omittingEmptySubsequences: false).map { holdsToken($0) ? Redaction.placeholder : String($0) }
            .joined(separator: "/")
        guard let question else { return out }
        let query = target[target.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Form.decoded(parts[0].utf8) ?? String(parts[0])
            if holdsToken(parts[0]) { return Redaction.placeholder }
            guard parts.count == 2 else { return String(pair) }
            if name.lowercased() == "t" || Redaction.isSecretParameter(name) || holdsToken(parts[1]) {
                return parts[0] + "=" + Redaction.placeholder
            }
            return String(pair)
        }
        out += "?" + query.joined(separator: "&")
        return out
    }

    /// Whether `text`, percent-decoded, holds an API token's mark.
    private static func holdsToken(_ text: Substring) -> Bool {
        let decoded = Form.decoded(text.utf8) ?? text.removingPercentEncoding ?? String(text)
        return decoded.lowercased().contains("agg_") || text.lowercased().contains("agg_")
    }
}
