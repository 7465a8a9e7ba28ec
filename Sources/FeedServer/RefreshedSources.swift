import ServeAccess
import ServeHTTP
import FeedCore
import FeedEngine
import FeedState
import FeedConfig
import Foundation
import Synchronization

/// What `serve`'s readers are answered from when it keeps a card store, per source the
/// background refresh looks after: the store, when it holds the source; else the cards of
/// the source's latest refresh, held in a card store in memory (``apart``: a source with
/// `record: false`, one only ever served from a fallback, or a store that cannot be
/// written), where they keep their first-seen times as the store's cards do. A reader of a source with neither yet waits
/// for its first refresh instead of fetching beside it — but a merged feed waits for a
/// source only within a grace after the refresh began to look after it (``pending(among:)``):
/// a new subscription, or a source that hangs, never holds every reader.
final class RefreshedSources: Sendable {
    struct Entry: Sendable {
        /// How the source's latest refresh went (live before its first, when the store
        /// already held it at start-up).
        var outcome: SourceOutcome
        /// The source's cards are held ``apart`` from the card store.
        var apart: Bool
    }

    /// The latest refresh's cards of the sources the card store does not hold.
    private let apart = InMemoryCardStore()
    /// Gone cards are no longer given: they go at the next refresh.
    private static let latestOnly = KeepPolicy(goneFor: 0, maxCards: .max)

    private struct Waiter {
        var id: Int
        var sources: [String]
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        /// The sources the refresh looks after.
        var sources: Set<String>
        var entries: [String: Entry] = [:]
        var stopped = false
        var waiting: [Waiter] = []
        var nextWaiter = 0
        /// Until when a merged feed waits for each source's first refresh.
        var waitedFor: [String: ContinuousClock.Instant] = [:]

        /// Every one of `sources` has its entry, or is no longer looked after (a reload
        /// removed it while a reader waited).
        func ready(_ sources: [String]) -> Bool {
            stopped || sources.allSatisfy { entries[$0] != nil || !self.sources.contains($0) }
        }

        /// Resumes the readers whose sources are all ready now.
        mutating func releaseReady() {
            var still: [Waiter] = []
            for waiter in waiting {
                if ready(waiter.sources) { waiter.continuation.resume() } else { still.append(waiter) }
            }
            waiting = still
        }
    }

    private let state: Mutex<State>

    /// How long a merged feed waits for a source's first refresh: at start-up, every
    /// source's; for a source added while serving (a reload, a subscription), less.
    static let startupGrace: Duration = .seconds(10)
    static let addedGrace: Duration = .seconds(2)

    init(sources: [String]) {
        var state = State(sources: Set(sources))
        let until = ContinuousClock.now + Self.startupGrace
        for source in sources { state.waitedFor[source] = until }
        self.state = Mutex(state)
    }

    /// Whether the refresh looks after every one of `sources`.
    func covers(_ sources: [String]) -> Bool {
        state.withLock { state in !sources.isEmpty && sources.allSatisfy(state.sources.contains) }
    }

    /// The refresh looks after `sources` from now on (a reload): the entries of the others
    /// are dropped; a changed source keeps its entry until its next refresh.
    func cover(_ sources: [String]) {
        state.withLock { state in
            let until = ContinuousClock.now + Self.addedGrace
            for source in sources where !state.sources.contains(source) { state.waitedFor[source] = until }
            state.sources = Set(sources)
            state.entries = state.entries.filter { state.sources.contains($0.key) }
            state.waitedFor = state.waitedFor.filter { state.sources.contains($0.key) }
            state.releaseReady()
        }
    }

    /// Holds `cards`, the latest refresh's of `source`, apart from the card store; the
    /// source's change counter there.
    func holdApart(_ source: String, cards: [Card]) async -> Int {
        await apart.record([LiveListing(source: source, cards: cards, complete: true, at: FeedRunner.wholeSecond())])
        _ = await apart.purge({ _ in Self.latestOnly }, now: Date(), limit: .max)
        return await apart.versions()[source] ?? 0
    }

    /// The cards held apart of `sources`, each source's in its latest refresh's order.
    func apartCards(of sources: [String]) async -> [KeptCard] {
        guard !sources.isEmpty else { return [] }
        return await apart.cards(of: sources).filter { $0.dates.goneSince == nil }
    }

    /// The sources of a merged feed whose first refresh has not ended, once each has
    /// ended or its grace has run out: the feed is answered without them.
    func pending(among sources: [String]) async -> [String] {
        func missing(_ state: State) -> [String] {
            state.stopped ? [] : sources.filter { state.sources.contains($0) && state.entries[$0] == nil }
        }
        let until = state.withLock { state in missing(state).compactMap { state.waitedFor[$0] }.max() }
        if let until, until > .now { await wait(for: sources, until: until) }
        return state.withLock { state in missing(state) }
    }

    /// The entries of `sources`, once each has one (or the refresh has stopped, when the
    /// missing ones are absent).
    func entries(_ sources: [String]) async -> [String: Entry] {
        await wait(for: sources, until: nil)
        return state.withLock { state in
            var found: [String: Entry] = [:]
            for source in sources { found[source] = state.entries[source] }
            return found
        }
    }

    /// Returns once every one of `sources` has its entry, or at `until`.
    private func wait(for sources: [String], until: ContinuousClock.Instant?) async {
        await withCheckedContinuation { continuation in
            let id: Int? = state.withLock { state in
                if state.ready(sources) { return nil }
                state.nextWaiter += 1
                state.waiting.append(Waiter(id: state.nextWaiter, sources: sources, continuation: continuation))
                return state.nextWaiter
            }
            guard let id else { return continuation.resume() }
            guard let until else { return }
            Task {
                try? await Task.sleep(until: until)
                // Resumed here unless the entries came first (and resumed it there).
                let waiter = self.state.withLock { state in
                    state.waiting.firstIndex { $0.id == id }.map { state.waiting.remove(at: $0) }
                }
                waiter?.continuation.resume()
            }
        }
    }

    /// Sets `source`'s entry, and lets the readers waiting on it go.
    func set(_ source: String, _ entry: Entry) {
        state.withLock { state in
            state.entries[source] = entry
            state.releaseReady()
        }
    }

    /// The refresh has stopped: no reader waits any longer.
    func stop() {
        state.withLock { state in
            state.stopped = true
            state.releaseReady()
        }
    }
}
