import FeedCore
@testable import FeedEngine
@testable import FeedState
import Foundation
import Logging
import Testing

@Suite struct RetryPolicyTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func backoffIsFullJitterUnderAnExponentialCeiling() {
        let policy = RetryPolicy(attempts: 5, baseDelay: 0.5, maxDelay: 3)
        var ceilings: [Double] = []
        for attempt in 1...4 {
            _ = policy.decide(attempt: attempt, retryAfter: nil, now: now) { range in
                #expect(range.lowerBound == 0)
                ceilings.append(range.upperBound)
                return range.upperBound
            }
        }
        #expect(ceilings == [0.5, 1, 2, 3])
        #expect(policy.decide(attempt: 5, retryAfter: nil, now: now) == .giveUp("after 5 tries"))
        #expect(RetryPolicy(attempts: 1).decide(attempt: 1, retryAfter: nil) == .giveUp("(no retries configured)"))
    }

    @Test func retryAfterInSecondsAndAsAnHTTPDate() {
        let policy = RetryPolicy()
        #expect(policy.decide(attempt: 1, retryAfter: "2", now: now) == .retry(after: 2))
        let date = HTTPDate.string(from: now.addingTimeInterval(7))
        #expect(policy.decide(attempt: 1, retryAfter: date, now: now) == .retry(after: 7))
        #expect(RetryPolicy.seconds(fromRetryAfter: "Sun, 06 Nov 1994 08:49:37 GMT", now: now) == 0)
        #expect(RetryPolicy.seconds(fromRetryAfter: "soon", now: now) == nil)
    }

    @Test func aRetryAfterBeyondTheCapGivesUpAndSaysWhen() {
        let policy = RetryPolicy(retryAfterCap: 30)
        #expect(policy.decide(attempt: 1, retryAfter: "120", now: now)
            == .giveUp("the upstream asks to wait 120 s (until 2023-11-14T22:15:20Z), more than the 30 s cap; try again after that"))
    }

    @Test func cacheControlMaxAge() {
        #expect(CacheControl.maxAge("public, max-age=60") == 60)
        #expect(CacheControl.maxAge("no-store") == 0)
        #expect(CacheControl.maxAge(nil) == nil)
    }

    /// A cache key names the source and the redacted URL, and separates credentials by a
    /// keyed hash: never the secret, nor a plain hash of it (issue 28, defect 2).
    @Test func cacheKeysSeparateCredentialsWithoutHoldingThem() throws {
        let identity = RequestIdentity(secret: Data(repeating: 7, count: 32))
        func key(_ source: String, _ url: String, _ headers: [String: String] = [:], sent: [String: String] = [:]) throws -> String {
            identity.cacheKey(source: source, request: HTTPRequest(url: try #require(URL(string: url)), headers: sent), headers: headers)
        }
        let signed = try key("users", "https://u:pw@api.test/users?page=2&api_key=hunter2&X-Amz-Signature=abc")
        #expect(signed.hasPrefix("users https://u:REDACTED@api.test/users?page=2&api_key=REDACTED&X-Amz-Signature=REDACTED "))
        #expect(!signed.contains("hunter2") && !signed.contains("pw@"))
        // Another secret in the query, in userinfo, or in a header: another entry.
        #expect(signed != (try key("users", "https://u:pw@api.test/users?page=2&api_key=other&X-Amz-Signature=abc")))
        #expect(signed != (try key("users", "https://u:pw2@api.test/users?page=2&api_key=hunter2&X-Amz-Signature=abc")))
        let plain = try key("users", "https://api.test/a?page=1")
        #expect(plain != (try key("users", "https://api.test/a?page=1", ["x-api-key": "A"])))
        #expect(try key("users", "https://api.test/a?page=1", ["x-api-key": "A"]) != (try key("users", "https://api.test/a?page=1", ["x-api-key": "B"])))
        // Header names are case-insensitive; a header the source sets counts as a configured one.
        #expect(try key("users", "https://api.test/a?page=1", ["X-Api-Key": "A"]) == (try key("users", "https://api.test/a?page=1", ["x-api-key": "A"])))
        #expect(try key("users", "https://api.test/a?page=1", sent: ["x-api-key": "A"]) == (try key("users", "https://api.test/a?page=1", ["x-api-key": "A"])))
        // Another source asking the same URL: another entry.
        #expect(plain != (try key("people", "https://api.test/a?page=1")))
        // The same request under another cache's secret hashes to something else.
        let other = RequestIdentity(secret: Data(repeating: 8, count: 32))
        #expect(plain != other.cacheKey(source: "users", request: HTTPRequest(url: try #require(URL(string: "https://api.test/a?page=1"))), headers: [:]))
        #expect(plain == (try key("users", "https://api.test/a?page=1")))
    }
}

/// The retry decision is one pure function of the outcome, and the transport follows it:
/// tested with a scripted transport, no network.
@Suite struct RetryDecisionTests {
    @Test func theDecisionIsMadeFromTheOutcomesType() {
        let policy = RetryPolicy(attempts: 3)
        let zero: (ClosedRange<Double>) -> Double = { _ in 0 }
        #expect(policy.decide(after: .status(200, retryAfter: nil), attempt: 1, random: zero) == nil)
        #expect(policy.decide(after: .status(404, retryAfter: nil), attempt: 1, random: zero) == nil)
        #expect(policy.decide(after: .status(503, retryAfter: nil), attempt: 1, random: zero) == .retry(after: 0))
        #expect(policy.decide(after: .status(429, retryAfter: "2"), attempt: 1, random: zero) == .retry(after: 2))
        #expect(policy.decide(after: .failure(.transport(.refused)), attempt: 2, random: zero) == .retry(after: 0))
        #expect(policy.decide(after: .failure(.transport(.refused)), attempt: 3, random: zero) == .giveUp("after 3 tries"))
        #expect(policy.decide(after: .failure(.timeout(seconds: 1)), attempt: 1, random: zero) == .retry(after: 0))
        for final: TransportFailure in [.redirectLoop, .tooLarge(bytes: 1), .tls, .badRedirect, .other("x")] {
            #expect(policy.decide(after: .failure(.transport(final)), attempt: 1, random: zero) == nil)
        }
        #expect(policy.decide(after: .failure(.undecodable(path: "", reason: "x")), attempt: 1, random: zero) == nil)
    }

    /// Answers from a script, one per request, and counts the requests.
    final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var script: [Result<Int, SourceError>]
        private(set) var requests: [HTTPRequest] = []

        init(_ script: [Result<Int, SourceError>]) {
            self.script = script
        }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            let next: Result<Int, SourceError> = lock.withLock {
                requests.append(request)
                return script.removeFirst()
            }
            return HTTPResponse(status: try next.get(), body: Data(), url: request.url)
        }
    }

    func transport(_ base: ScriptedTransport, attempts: Int = 3) -> RetryingTransport {
        RetryingTransport(base: base, sourceID: "shop", headers: ["x-api-key": "k"], policy: RetryPolicy(attempts: attempts),
                          logger: Logger(label: "test"), sleep: { _ in })
    }

    let request = HTTPRequest(url: URL(string: "http://shop.test/p.json")!)

    @Test func transientFailuresAreRetriedUntilAnAnswer() async throws {
        let script = ScriptedTransport([.failure(.transport(.refused)), .success(503), .success(200)])
        let response = try await transport(script).send(request)
        #expect(response.status == 200)
        #expect(script.requests.count == 3)
        #expect(script.requests.allSatisfy { $0.headers["x-api-key"] == "k" })
    }

    @Test func aFinalFailureIsThrownAtOnce() async throws {
        let script = ScriptedTransport([.failure(.transport(.redirectLoop)), .success(200)])
        await #expect(throws: SourceError.transport(.redirectLoop)) { try await transport(script).send(request) }
        #expect(script.requests.count == 1)
    }

    @Test func retriesRunOutWithTheLastCause() async throws {
        let script = ScriptedTransport([.success(503), .success(502)])
        await #expect(throws: SourceError.failed("HTTP 502 after 2 tries")) { try await transport(script, attempts: 2).send(request) }
        #expect(script.requests.count == 2)
    }

    @Test func aNotFoundIsAnAnswerNotARetry() async throws {
        let script = ScriptedTransport([.success(404)])
        #expect(try await transport(script).send(request).status == 404)
        #expect(script.requests.count == 1)
    }
}
