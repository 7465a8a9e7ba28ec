import FeedCore
import Foundation
import Logging

/// One source's network: its headers on every request, retries as ``RetryPolicy`` decides,
/// each retry logged (shown with `--verbose`). Wraps any transport, so it is tested with a
/// scripted one.
struct RetryingTransport: HTTPTransport {
    let base: any HTTPTransport
    let sourceID: String
    let headers: [String: String]
    let policy: RetryPolicy
    let logger: Logger
    /// Hosts not reached moments ago: not asked again until they may be back.
    var unreachable: UnreachableHosts?
    /// Waits between tries; tests pass one that does not sleep.
    var sleep: @Sendable (Double) async throws -> Void = { try await Task.sleep(for: .milliseconds(Int($0 * 1000))) }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        request.headers.merge(headers) { requestValue, _ in requestValue }
        if let failure = unreachable?.recentFailure(request.url) { throw SourceError.transport(.lately(failure)) }
        var attempt = 1
        while true {
            let result: Result<HTTPResponse, SourceError>
            do {
                result = .success(try await base.send(request))
            } catch let error as SourceError {
                result = .failure(error)
            }
            let outcome: RetryPolicy.Attempt = switch result {
            case .success(let response): .status(response.status, retryAfter: response.headers["retry-after"])
            case .failure(let error): .failure(error)
            }
            if let unreachable {
                switch result {
                case .failure(.transport(let failure)) where UnreachableHosts.isUnreachable(failure):
                    unreachable.record(failure, for: request.url)
                case .success:
                    unreachable.record(nil, for: request.url)
                default:
                    break
                }
            }
            guard let decision = policy.decide(after: outcome, attempt: attempt) else { return try result.get() }
            let failure = switch result {
            case .success(let response): "HTTP \(response.status)"
            case .failure(let error): error.description
            }
            switch decision {
            case .giveUp(let why):
                throw SourceError.failed("\(failure) \(why)")
            case .retry(let delay):
                logger.info("\(sourceID): \(failure) from \(request.url.redactedString); retry \(attempt) of \(policy.attempts - 1) in \(String(format: "%.2f", delay)) s")
                try await sleep(delay)
                attempt += 1
            }
        }
    }
}

/// The live network with one source's per-request timeout, as a plain transport.
struct TimedLiveTransport: HTTPTransport {
    let live: LiveHTTPTransport
    let timeout: Double
    /// The source's `max_body` in bytes.
    let maxBody: Int

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await live.send(request, timeout: timeout, maxBody: maxBody)
    }
}
