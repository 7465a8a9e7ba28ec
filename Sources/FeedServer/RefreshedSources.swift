import FeedCore
import FeedEngine
import Synchronization

/// What `serve`'s readers are answered from when it keeps a card store, per source the
/// background refresh looks after: the store, when it holds the source; else the cards of
/// the source's latest refresh (a source with `record: false`, one only ever served from a
/// fallback, or a store that cannot be read). A reader of a source with neither yet waits
/// for its first refresh instead of fetching beside it.
final class RefreshedSources: Sendable {
    struct Entry: Sendable {
        /// How the source's latest refresh went (live before its first, when the store
        /// already held it at start-up).
        var outcome: SourceOutcome
        /// Nil: readers read the store.
        var cards: [Card]?
    }

    private struct State {
        /// The sources the refresh looks after.
        var sources: Set<String>
        var entries: [String: Entry] = [:]
        var stopped = false
        var waiting: [(sources: [String], continuation: CheckedContinuation<Void, Never>)] = []

        /// Every one of `sources` has its entry, or is no longer looked after (a reload
        /// removed it while a reader waited).
        func ready(_ sources: [String]) -> Bool {
            stopped || sources.allSatisfy { entries[$0] != nil || !self.sources.contains($0) }
        }

        /// Resumes the readers whose sources are all ready now.
        mutating func releaseReady() {
            var still: [(sources: [String], continuation: CheckedContinuation<Void, Never>)] = []
            for waiter in waiting {
                if ready(waiter.sources) { waiter.continuation.resume() } else { still.append(waiter) }
            }
            waiting = still
        }
    }

    private let state: Mutex<State>

    init(sources: [String]) {
        state = Mutex(State(sources: Set(sources)))
    }

    /// Whether the refresh looks after every one of `sources`.
    func covers(_ sources: [String]) -> Bool {
        state.withLock { state in !sources.isEmpty && sources.allSatisfy(state.sources.contains) }
    }

    /// The refresh looks after `sources` from now on (a reload): the entries of the others
    /// are dropped; a changed source keeps its entry until its next refresh.
    func cover(_ sources: [String]) {
        state.withLock { state in
            state.sources = Set(sources)
            state.entries = state.entries.filter { state.sources.contains($0.key) }
            state.releaseReady()
        }
    }

    /// The entries of `sources`, once each has one (or the refresh has stopped, when the
    /// missing ones are absent).
    func entries(_ sources: [String]) async -> [String: Entry] {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                if state.ready(sources) {
                    continuation.resume()
                } else {
                    state.waiting.append((sources, continuation))
                }
            }
        }
        return state.withLock { state in
            var found: [String: Entry] = [:]
            for source in sources { found[source] = state.entries[source] }
            return found
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
