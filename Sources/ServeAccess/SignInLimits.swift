import ServeHTTP
import Foundation

/// What sign-in attempts may cost, for people and for the cores:
///
/// - **Per person and address**: after ``perPersonAndAddress`` failures within
///   ``window``, that address is refused for that person (429, `Retry-After`) until the
///   oldest ages out. Someone guessing at one person from one place stops there, and
///   nobody else is locked out: not the person from their own address, nor anyone behind
///   the same trusted proxy (each has their own address).
/// - **Per address**, all persons: ``perAddress`` failures, then refused (one address
///   trying many names).
/// - **Per person**, all addresses: past ``perPersonBeforeSlowing`` failures, every
///   attempt for that person waits ``slowdown`` first, and is never refused for it: many
///   addresses guessing at one person are slowed, and the person still gets in.
/// - **Cores**: at most ``concurrentChecks`` password checks at once; the rest are
///   answered 429 at once (bcrypt at cost 12 keeps a core busy a quarter of a second).
///
/// An attempt takes its slot before its password is checked, so concurrent attempts
/// cannot all pass the count together; a right password gives its slot back.
public actor SignInLimits {
    public static let perPersonAndAddress = 10
    package static let perAddress = 100
    package static let perPersonBeforeSlowing = 30
    package static let slowdown: Duration = .seconds(2)
    package static let concurrentChecks = 2
    package static let window: TimeInterval = 15 * 60

    /// An admitted attempt: its reserved slots, given back or kept by ``finish(_:_:)``.
    package struct Ticket: Sendable {
        fileprivate let keys: [String]
        fileprivate let pair: String
        fileprivate let at: Date
    }

    package enum Admission: Sendable {
        case check(Ticket)
        case refused(retryAfter: Int)
        case busy
    }

    package enum Outcome: Sendable {
        case succeeded, failed
        /// The check could not be made (the accounts could not be read): counts as nothing.
        case undecided
    }

    private var failures: [String: [Date]] = [:]
    private var checking = 0

    /// How long an attempt for `person` waits before it is admitted.
    package func slowdown(person: String, now: Date = Date()) -> Duration {
        recent("person:" + person, now: now).count >= Self.perPersonBeforeSlowing ? Self.slowdown : .zero
    }

    /// Admits an attempt for `person` from `address`, reserving its slots, or refuses it.
    package func admit(person: String, address: String, now: Date = Date()) -> Admission {
        if let wait = refusal(person: person, address: address, now: now) { return .refused(retryAfter: wait) }
        guard checking < Self.concurrentChecks else { return .busy }
        checking += 1
        let keys = note(person: person, address: address, now: now)
        return .check(Ticket(keys: keys, pair: Self.pair(person, address), at: now))
    }

    /// The seconds `address` is refused for `person` (or for everyone), nil when it is not:
    /// the limits of a check that costs nothing to make (a Fever key is a hash looked up,
    /// no password checked), which holds no slot and counts only when it fails.
    package func refusal(person: String, address: String, now: Date = Date()) -> Int? {
        let limited = [(Self.pair(person, address), Self.perPersonAndAddress), ("address:" + address, Self.perAddress)]
        let waits = limited.compactMap { key, limit -> TimeInterval? in
            let recent = recent(key, now: now)
            guard recent.count >= limit, let oldest = recent.first else { return nil }
            return oldest.addingTimeInterval(Self.window).timeIntervalSince(now)
        }
        return waits.max().map { max(1, Int($0.rounded(.up))) }
    }

    /// Counts a failed check that ``refusal(person:address:now:)`` let through.
    package func failed(person: String, address: String, now: Date = Date()) {
        _ = note(person: person, address: address, now: now)
    }

    /// Counts an attempt against its person and address (given back by ``finish(_:_:)``
    /// unless it failed); the keys it counted under.
    private func note(person: String, address: String, now: Date) -> [String] {
        if failures.count > 10_000 { failures = failures.filter { $0.value.last.map { now.timeIntervalSince($0) < Self.window } ?? false } }
        let keys = [Self.pair(person, address), "address:" + address, "person:" + person]
        for key in keys { failures[key] = recent(key, now: now) + [now] }
        return keys
    }

    private static func pair(_ person: String, _ address: String) -> String {
        "pair:" + address + "\u{0}" + person
    }

    /// Ends an admitted attempt: a failure keeps its slots; a success or an undecided
    /// check gives them back, and a success clears its person's failures from its address.
    package func finish(_ ticket: Ticket, _ outcome: Outcome) {
        checking -= 1
        switch outcome {
        case .failed:
            return
        case .succeeded:
            failures[ticket.pair] = nil
        case .undecided:
            break
        }
        for key in ticket.keys {
            guard var dates = failures[key], let index = dates.lastIndex(of: ticket.at) else { continue }
            dates.remove(at: index)
            failures[key] = dates.isEmpty ? nil : dates
        }
    }

    private func recent(_ key: String, now: Date) -> [Date] {
        (failures[key] ?? []).filter { now.timeIntervalSince($0) < Self.window }
    }
}
