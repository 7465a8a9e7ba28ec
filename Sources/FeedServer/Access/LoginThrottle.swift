import Foundation

/// Failed sign-ins per client address and per user name: past ``limit`` within
/// ``window``, the next attempt is refused (429 with `Retry-After`) before any password is
/// checked, until the oldest failure ages out. A right password clears its user's count.
public actor LoginThrottle {
    public static let limit = 10
    static let window: TimeInterval = 15 * 60
    private var failures: [String: [Date]] = [:]

    /// Seconds until `address` and `user` may try again, or nil when they may now.
    func retryAfter(address: String, user: String?, now: Date = Date()) -> Int? {
        let waits = Self.keys(address: address, user: user).compactMap { key -> TimeInterval? in
            let recent = recentFailures(key, now: now)
            guard recent.count >= Self.limit, let oldest = recent.first else { return nil }
            return oldest.addingTimeInterval(Self.window).timeIntervalSince(now)
        }
        return waits.max().map { max(1, Int($0.rounded(.up))) }
    }

    func failed(address: String, user: String?, now: Date = Date()) {
        if failures.count > 10_000 { failures = failures.filter { $0.value.last.map { now.timeIntervalSince($0) < Self.window } ?? false } }
        for key in Self.keys(address: address, user: user) { failures[key] = recentFailures(key, now: now) + [now] }
    }

    func succeeded(user: String) {
        failures["user:" + user] = nil
    }

    private func recentFailures(_ key: String, now: Date) -> [Date] {
        (failures[key] ?? []).filter { now.timeIntervalSince($0) < Self.window }
    }

    private static func keys(address: String, user: String?) -> [String] {
        ["address:" + address] + (user.map { ["user:" + $0] } ?? [])
    }
}
