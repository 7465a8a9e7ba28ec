import FeedState
import SameItem
import Synchronization

/// The store's same-item decisions as the reader's pages read them: read again at most
/// once a second, at once after this server records one, and after any source moves (a
/// decision made elsewhere moves its cards' sources, which ``SourceRefresher`` follows: a
/// page made again for that move must not read the decisions from before it). A page read
/// them from the store every time: on PostgreSQL a round trip per page for a table that
/// changes when a person says so.
final class RecentItemDecisions: Sendable {
    private struct Reading {
        var kept: (at: ContinuousClock.Instant, moves: Int, decisions: ItemDecisions)?
        /// Moved by ``forget()``: a reading begun before it is not kept.
        var generation = 0
    }

    private let store: (any ItemDecisionStore)?
    private let reading = Mutex(Reading())
    static let freshFor: Duration = .seconds(1)

    init(_ store: (any ItemDecisionStore)?) {
        self.store = store
    }

    /// The decisions, read from the store when the last reading is a second old or sources
    /// have moved since (`moves`: ``SourceVersions/moves``).
    func current(moves: Int) async throws -> ItemDecisions {
        let now = ContinuousClock.now
        let (kept, generation) = reading.withLock { ($0.kept, $0.generation) }
        if let kept, now - kept.at < Self.freshFor, kept.moves == moves { return kept.decisions }
        let decisions = ItemDecisions(try await store?.itemDecisions() ?? [])
        reading.withLock { if $0.generation == generation { $0.kept = (now, moves, decisions) } }
        return decisions
    }

    /// Forgets the last reading (this server recorded a decision).
    func forget() {
        reading.withLock { $0.kept = nil; $0.generation += 1 }
    }
}
