import Foundation

/// What stands between `/cards/{id}` and a source's upstream: a card id is an open
/// trigger for authenticated upstream requests, so ids the upstream said it does not
/// have are remembered for a while, and each source's lookups are rate-limited (a token
/// bucket: a burst, then a steady rate).
actor DetailGuard {
    struct Limits: Sendable {
        /// Lookups a source takes at once before the rate applies.
        var burst = 20.0
        /// Lookups per second per source after the burst.
        var perSecond = 5.0
        /// How long "no such card" is remembered.
        var notFoundFor: Duration = .seconds(300)
        /// Unknown ids remembered at most (the oldest are forgotten first).
        var rememberedAtMost = 10_000
    }

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let limits: Limits
    private var buckets: [String: Bucket] = [:]
    private var missing: [String: (message: String, until: ContinuousClock.Instant)] = [:]
    private var missingOrder: [String] = []

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The remembered "not found" message for `cardID`, if the upstream said so lately.
    func knownMissing(_ cardID: String, now: ContinuousClock.Instant = .now) -> String? {
        guard let entry = missing[cardID] else { return nil }
        guard entry.until > now else {
            missing[cardID] = nil
            return nil
        }
        return entry.message
    }

    /// Takes one lookup from `source`'s bucket: nil when admitted, else how long until
    /// the next one is.
    func admit(_ source: String, now: ContinuousClock.Instant = .now) -> Duration? {
        var bucket = buckets[source] ?? Bucket(tokens: limits.burst, updated: now)
        let elapsed = bucket.updated.duration(to: now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        bucket.tokens = min(limits.burst, bucket.tokens + seconds * limits.perSecond)
        bucket.updated = now
        defer { buckets[source] = bucket }
        guard bucket.tokens >= 1 else {
            return .milliseconds(Int(((1 - bucket.tokens) / limits.perSecond * 1000).rounded(.up)))
        }
        bucket.tokens -= 1
        return nil
    }

    /// Remembers that the upstream has no `cardID`.
    func rememberMissing(_ cardID: String, message: String, now: ContinuousClock.Instant = .now) {
        if missing[cardID] == nil {
            missingOrder.append(cardID)
            if missingOrder.count > limits.rememberedAtMost {
                let dropped = missingOrder.prefix(missingOrder.count - limits.rememberedAtMost)
                for id in dropped { missing[id] = nil }
                missingOrder.removeFirst(dropped.count)
            }
        }
        missing[cardID] = (message, now + limits.notFoundFor)
    }
}
