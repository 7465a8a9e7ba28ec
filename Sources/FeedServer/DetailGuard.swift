import ServeAccess
import ServeHTTP
import FeedEngine
import Foundation

/// What stands between `/cards/{id}` and a source's upstream: a card id is an open
/// trigger for authenticated upstream requests, so ids the upstream said it does not
/// have are remembered for a while, and lookups are rate-limited by token buckets (a
/// burst, then a steady rate): one per client address, then one per source. A client's
/// own bucket is smaller than a source's, so one client asking for unknown ids runs out
/// of its own tokens, not of the ones other readers' lookups need. A card found is kept
/// for its source's `cache_ttl`, so repeated lookups are answered from memory, also when
/// the state database (and with it the HTTP cache) is down.
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
        /// Lookups one client address takes at once, and per second after that.
        var clientBurst = 10.0
        var clientPerSecond = 2.0
        /// Client buckets kept at most: past it, buckets that have filled up again (their
        /// clients idle) are dropped.
        var clientsAtMost = 10_000
    }

    /// Why a lookup was refused, and how long until the next one is admitted.
    struct Refusal: Sendable, Equatable {
        var wait: Duration
        /// Whether the client's own bucket was empty (else the source's).
        var byClient: Bool
    }

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let limits: Limits
    private var buckets: [String: Bucket] = [:]
    private var clientBuckets: [String: Bucket] = [:]
    private var missing: Remembered<String>
    private var found: Remembered<FeedRunner.ShowResult>

    init(limits: Limits = Limits()) {
        self.limits = limits
        missing = Remembered(atMost: limits.rememberedAtMost)
        found = Remembered(atMost: limits.rememberedAtMost)
    }

    /// The remembered "not found" message for `cardID`, if the upstream said so lately.
    func knownMissing(_ cardID: String, now: ContinuousClock.Instant = .now) -> String? {
        missing.value(for: cardID, now: now)
    }

    /// Takes one lookup from `client`'s bucket, then from `source`'s: nil when admitted,
    /// else which was empty and how long until the next lookup is. A client refused by its
    /// own bucket takes nothing from the source's.
    func admit(_ source: String, client: String, now: ContinuousClock.Instant = .now) -> Refusal? {
        if clientBuckets.count > limits.clientsAtMost { dropIdleClients(now: now) }
        if let wait = Self.take(from: &clientBuckets, client, burst: limits.clientBurst, perSecond: limits.clientPerSecond, now: now) {
            return Refusal(wait: wait, byClient: true)
        }
        if let wait = Self.take(from: &buckets, source, burst: limits.burst, perSecond: limits.perSecond, now: now) {
            return Refusal(wait: wait, byClient: false)
        }
        return nil
    }

    /// One token from the bucket at `key`: nil when there was one, else how long until one.
    private static func take(from buckets: inout [String: Bucket], _ key: String, burst: Double, perSecond: Double,
                             now: ContinuousClock.Instant) -> Duration? {
        var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
        bucket.tokens = min(burst, bucket.tokens + seconds(from: bucket.updated, to: now) * perSecond)
        bucket.updated = now
        defer { buckets[key] = bucket }
        guard bucket.tokens >= 1 else {
            return .milliseconds(Int(((1 - bucket.tokens) / perSecond * 1000).rounded(.up)))
        }
        bucket.tokens -= 1
        return nil
    }

    private static func seconds(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> Double {
        let elapsed = start.duration(to: end)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Forgets the clients whose buckets have filled up again: they are as new ones.
    private func dropIdleClients(now: ContinuousClock.Instant) {
        let refill = limits.clientBurst / limits.clientPerSecond
        clientBuckets = clientBuckets.filter { Self.seconds(from: $0.value.updated, to: now) < refill }
    }

    /// The card found for `cardID` lately.
    func keptCard(_ cardID: String, now: ContinuousClock.Instant = .now) -> FeedRunner.ShowResult? {
        found.value(for: cardID, now: now)
    }

    /// Keeps what was found for `cardID` for `duration` (its source's `cache_ttl`: as long
    /// as the HTTP cache would have kept the response it came from).
    func keep(_ cardID: String, _ result: FeedRunner.ShowResult, for duration: Duration, now: ContinuousClock.Instant = .now) {
        found.remember(result, for: cardID, until: now + duration)
    }

    /// Remembers that the upstream has no `cardID`.
    func rememberMissing(_ cardID: String, message: String, now: ContinuousClock.Instant = .now) {
        missing.remember(message, for: cardID, until: now + limits.notFoundFor)
    }
}

/// Values by card id until a time, at most so many: past that, the oldest kept go first.
private struct Remembered<Value> {
    private var entries: [String: (value: Value, until: ContinuousClock.Instant)] = [:]
    private var order: [String] = []
    let atMost: Int

    init(atMost: Int) {
        self.atMost = atMost
    }

    mutating func value(for key: String, now: ContinuousClock.Instant) -> Value? {
        guard let entry = entries[key] else { return nil }
        guard entry.until > now else {
            entries[key] = nil
            return nil
        }
        return entry.value
    }

    mutating func remember(_ value: Value, for key: String, until: ContinuousClock.Instant) {
        if entries[key] == nil {
            order.append(key)
            if order.count > atMost {
                let dropped = order.prefix(order.count - atMost)
                for id in dropped { entries[id] = nil }
                order.removeFirst(dropped.count)
            }
        }
        entries[key] = (value, until)
    }
}
