import FeedCore
import Foundation

/// When and how long to wait before trying a request again: exponential backoff with
/// full jitter, and the upstream's `Retry-After` honoured up to a cap.
public struct RetryPolicy: Sendable {
    /// Statuses that say "try again later".
    public static let retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// Tries in all, the first included.
    public var attempts: Int
    /// Backoff before retry n (from 1) is random in 0...min(maxDelay, baseDelay * 2^(n-1)).
    public var baseDelay: Double
    public var maxDelay: Double
    /// A `Retry-After` longer than this fails the source instead of waiting.
    public var retryAfterCap: Double

    public init(attempts: Int = 3, baseDelay: Double = 0.25, maxDelay: Double = 8, retryAfterCap: Double = 30) {
        self.attempts = attempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.retryAfterCap = retryAfterCap
    }

    public enum Decision: Equatable, Sendable {
        case retry(after: Double)
        case giveUp(String)
    }

    /// How one try ended.
    public enum Attempt: Sendable, Equatable {
        /// A response arrived (with its `Retry-After`, if any).
        case status(Int, retryAfter: String?)
        /// No response.
        case failure(SourceError)
    }

    /// The whole retry decision after try number `attempt` (from 1): `nil` when the try's
    /// outcome is final as it is (a response worth returning, or a failure no retry can
    /// mend), else retry after a delay or give up saying why.
    public func decide(after outcome: Attempt, attempt: Int, now: Date = Date(),
                       random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }) -> Decision? {
        switch outcome {
        case .status(let status, let retryAfter):
            guard Self.retryableStatuses.contains(status) else { return nil }
            return decide(attempt: attempt, retryAfter: retryAfter, now: now, random: random)
        case .failure(let error):
            guard Self.isTransient(error) else { return nil }
            return decide(attempt: attempt, retryAfter: nil, now: now, random: random)
        }
    }

    /// Connect failures and timeouts are worth another try; a body over the size cap,
    /// a redirect loop or an unreadable response are not.
    public static func isTransient(_ error: SourceError) -> Bool {
        switch error {
        case .timeout: true
        case .transport(let failure): failure.isTransient
        default: false
        }
    }

    /// What to do after try number `attempt` (from 1) failed. `retryAfter` is the
    /// header's raw value, if the response had one.
    public func decide(attempt: Int, retryAfter: String?, now: Date = Date(),
                       random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }) -> Decision {
        guard attempt < attempts else { return .giveUp(attempt == 1 ? "(no retries configured)" : "after \(attempt) tries") }
        if let retryAfter, let wait = Self.seconds(fromRetryAfter: retryAfter, now: now) {
            guard wait <= retryAfterCap else {
                let when = Date(timeInterval: wait, since: now).formatted(.iso8601)
                return .giveUp("the upstream asks to wait \(Int(wait.rounded(.up))) s (until \(when)), more than the \(Int(retryAfterCap)) s cap; try again after that")
            }
            return .retry(after: wait)
        }
        let ceiling = min(maxDelay, baseDelay * pow(2, Double(attempt - 1)))
        return .retry(after: random(0...ceiling))
    }

    /// `Retry-After` as seconds from `now`: either delay-seconds or an HTTP-date.
    public static func seconds(fromRetryAfter value: String, now: Date) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed), seconds >= 0 { return Double(seconds) }
        guard let date = HTTPDate.date(from: trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
