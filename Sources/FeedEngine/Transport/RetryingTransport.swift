import FeedCore
import Foundation
import Logging

/// One source's network: its credentials on every request to its own origin, retries as
/// ``RetryPolicy`` decides, each retry logged (shown with `--verbose`). Wraps any
/// transport, so it is tested with a scripted one.
struct RetryingTransport: HTTPTransport {
    let base: any HTTPTransport
    let sourceID: String
    let headers: [String: String]
    /// Where the configured headers may go: the source's `url:` origin (scheme, host,
    /// port). A detail URL on another host gets none of them.
    var origin: URL?
    let policy: RetryPolicy
    let logger: Logger
    /// Hosts not reached moments ago: not asked again until they may be back.
    var unreachable: UnreachableHosts?
    /// Waits between tries; tests pass one that does not sleep.
    var sleep: @Sendable (Double) async throws -> Void = { try await Task.sleep(for: .milliseconds(Int($0 * 1000))) }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let request = Self.credentialed(request, headers: headers, origin: origin)
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

extension RetryingTransport {
    /// `request` as sent: the configured headers added when it goes to `origin` (or when
    /// no origin is given), and a `user:password@` in its URL sent as Basic authorization
    /// (RFC 7617) rather than left in the URL, where HTTP clients do not send it.
    static func credentialed(_ request: HTTPRequest, headers: [String: String], origin: URL?) -> HTTPRequest {
        var request = request
        if origin.map({ Origin($0) == Origin(request.url) }) ?? true {
            request.headers.merge(headers) { requestValue, _ in requestValue }
        }
        guard var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false),
              components.user != nil || components.password != nil else { return request }
        let pair = "\(components.user ?? ""):\(components.password ?? "")"
        if !request.headers.keys.contains(where: { $0.lowercased() == "authorization" }) {
            request.headers["Authorization"] = "Basic " + Data(pair.utf8).base64EncodedString()
        }
        components.user = nil
        components.password = nil
        if let bare = components.url { request.url = bare }
        return request
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

/// The live network for addresses an upstream wrote (`full_content:` article links): on
/// the source's own host as the source is reached (its owner chose that host), anywhere
/// else public addresses only, and the blocks the transport also allows — a feed cannot
/// make the machine fetch, and keep for its readers, what its own network hides.
struct UpstreamLinkTransport: HTTPTransport {
    let live: LiveHTTPTransport
    let timeout: Double
    let maxBody: Int
    /// The source's `url:` host.
    let ownHost: String?

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let own = request.url.host?.lowercased() == ownHost?.lowercased()
        let policy = own ? nil : AddressPolicy.publicOnly(alsoAllowing: live.addresses.alsoAllowed)
        return try await live.send(request, timeout: timeout, maxBody: maxBody, addresses: policy)
    }
}
