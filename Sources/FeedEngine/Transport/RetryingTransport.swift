import FeedCore
import Foundation
import Logging

/// The live network for one source: its headers and timeout, retries per
/// ``RetryPolicy``, each retry logged (shown with `--verbose`).
struct RetryingTransport: HTTPTransport {
    let live: LiveHTTPTransport
    let sourceID: String
    let headers: [String: String]
    let timeout: Double
    let policy: RetryPolicy
    let logger: Logger

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        request.headers.merge(headers) { requestValue, _ in requestValue }
        var attempt = 1
        while true {
            let failure: String
            let retryAfter: String?
            do {
                let response = try await live.send(request, timeout: timeout)
                guard RetryPolicy.retryableStatuses.contains(response.status) else { return response }
                failure = "HTTP \(response.status)"
                retryAfter = response.headers["retry-after"]
            } catch let error as SourceError {
                guard Self.isRetryable(error) else { throw error }
                failure = error.description
                retryAfter = nil
            }
            switch policy.decide(attempt: attempt, retryAfter: retryAfter) {
            case .giveUp(let why):
                throw SourceError.failed("\(failure) \(why)")
            case .retry(let delay):
                logger.info("\(sourceID): \(failure) from \(request.url.redactedString); retry \(attempt) of \(policy.attempts - 1) in \(String(format: "%.2f", delay)) s")
                try await Task.sleep(for: .milliseconds(Int(delay * 1000)))
                attempt += 1
            }
        }
    }

    /// Connect failures and timeouts are worth another try; a body over the size cap,
    /// a redirect loop or a broken response are not.
    static func isRetryable(_ error: SourceError) -> Bool {
        switch error {
        case .timeout: true
        case .transport(let cause): cause == "connection refused" || cause.hasPrefix("network")
            || cause.hasPrefix("the server closed")
        default: false
        }
    }
}
