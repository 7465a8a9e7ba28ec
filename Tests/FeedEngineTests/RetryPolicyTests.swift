@testable import FeedEngine
import Foundation
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
        let date = HTTPDate.string(now.addingTimeInterval(7))
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

    /// No secret, nor a hash of one that a short key could be guessed back from.
    @Test func cacheKeysNeverHoldSecrets() {
        let key = StateStore.cacheKey(for: URL(string: "https://u:pw@api.test/users?page=2&api_key=hunter2&X-Amz-Signature=abc")!)
        #expect(key == "https://u:REDACTED@api.test/users?page=2&api_key=REDACTED&X-Amz-Signature=REDACTED")
        #expect(key == StateStore.cacheKey(for: URL(string: "https://u:pw@api.test/users?page=2&api_key=other&X-Amz-Signature=def")!))
        #expect(StateStore.cacheKey(for: URL(string: "https://api.test/a?page=1")!) == "https://api.test/a?page=1")
    }
}
