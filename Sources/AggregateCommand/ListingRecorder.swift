import FeedCore
import FeedState
import FeedSupport

/// Records listings as a run reads them (`refresh`, the feed command), on a task of its
/// own: each write takes every listing that arrived while the last one was written (one
/// transaction per source cost more than it saved). After a failure it records no more and
/// says so once (`failure`): a refresh then fails (`failed`), so that cron hears of a store
/// it cannot write (a full disk); the feed command's output stands as printed.
actor ListingRecorder {
    let store: (any CardStore)?
    /// What to say when the store cannot be written, given why.
    let failure: @Sendable (String) -> String
    private var pending: [LiveListing] = []
    private var writer: Task<Void, Never>?
    private(set) var failed = false
    /// Cards and listings written; of those listings, how many were unchanged (no cards).
    private(set) var recorded = (cards: 0, listings: 0, unchanged: 0)

    init(store: (any CardStore)?, failure: @escaping @Sendable (String) -> String = { reason in
        "aggregate: cannot record the cards in the card store (\(reason)); the refresh records nothing more, and fails"
    }) {
        self.store = store
        self.failure = failure
    }

    /// Queues `listing`; returns at once.
    func record(_ listing: LiveListing) {
        guard store != nil, !failed else { return }
        pending.append(listing)
        if writer == nil { writer = Task { await self.drain() } }
    }

    /// Waits until every queued listing is written.
    func finish() async {
        await writer?.value
    }

    private func drain() async {
        while let store, !pending.isEmpty, !failed {
            let batch = pending
            pending = []
            do {
                try await store.record(batch)
                recorded = (recorded.cards + batch.map(\.cards.count).reduce(0, +), recorded.listings + batch.count,
                            recorded.unchanged + batch.filter(\.unchanged).count)
            } catch {
                failed = true
                Terminal.writeError(failure(PlainWords.describe(error)))
            }
        }
        writer = nil
    }
}
