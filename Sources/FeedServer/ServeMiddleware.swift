import Foundation
import HTTPTypes
import Hummingbird

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
    /// Nil: no line, the metrics only.
    let write: (@Sendable (String) -> Void)?
    let metrics: ServeMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
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
}

/// One access-log line, the same from the router and from the kept-answer handler.
enum AccessLine {
    /// `GET /feed.atom?per_page=50 200 12.3 ms`.
    static func text(method: HTTPRequest.Method, target: String, status: Int, elapsed: Duration) -> String {
        // Tenths of a millisecond, formatted by hand (String(format:) was a tenth of a cached answer).
        let tenths = elapsed.components.seconds * 10_000 + elapsed.components.attoseconds / 100_000_000_000_000
        return "\(method) \(redacted(target)) \(status) \(tenths / 10).\(tenths % 10) ms"
    }

    /// The target with the value of a `token=` replaced: a sign-in never reaches a log.
    static func redacted(_ target: String) -> String {
        guard let question = target.firstIndex(of: "?"), target[question...].contains("token=") else { return target }
        let query = target[target.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("token=") ? "token=REDACTED" : String($0) }
        return target[...question] + query.joined(separator: "&")
    }
}
