import Foundation

/// What people decided about which cards are one item (`aggregate same`, `aggregate
/// apart`, the reader's buttons), which always beats the rules of `merge: same-item`:
/// pairs of card ids, each pair's latest decision kept. Everyone's, as the cards are.
/// Implementations: ``InMemoryItemDecisions`` (tests), SQLite in `cards.sqlite`,
/// PostgreSQL beside the cards.
public protocol ItemDecisionStore: Sendable {
    /// Records that each of `pairs` is (`same`) or is not one item; a later decision on a
    /// pair replaces an earlier one. A store that also keeps the cards moves the version of
    /// each named card's source with it (``CardStore/versions()``), so that every process
    /// keeping pages of those sources — a `serve` beside the command line, another
    /// replica — makes them again with the decision.
    func decide(_ pairs: [ItemPair], same: Bool, at: Date) async throws
    /// Every pair's latest decision.
    func itemDecisions() async throws -> [ItemDecision]
}

/// Two card ids, in order (a pair is the same pair whichever way it is written).
public struct ItemPair: Sendable, Hashable {
    public let first: String
    public let second: String

    public init(_ a: String, _ b: String) {
        (first, second) = a <= b ? (a, b) : (b, a)
    }
}

/// A pair a person joined (`same`) or kept apart.
public struct ItemDecision: Sendable, Hashable {
    public var pair: ItemPair
    public var same: Bool
    public var decidedAt: Date

    public init(pair: ItemPair, same: Bool, decidedAt: Date) {
        self.pair = pair
        self.same = same
        self.decidedAt = decidedAt
    }
}

/// Decisions in memory, for tests and runs that keep nothing.
public actor InMemoryItemDecisions: ItemDecisionStore {
    private var decided: [ItemPair: ItemDecision] = [:]

    public init() {}

    public func decide(_ pairs: [ItemPair], same: Bool, at: Date) {
        for pair in pairs { decided[pair] = ItemDecision(pair: pair, same: same, decidedAt: at) }
    }

    public func itemDecisions() -> [ItemDecision] {
        decided.values.sorted { ($0.pair.first, $0.pair.second) < ($1.pair.first, $1.pair.second) }
    }
}
