import FeedCore
import FeedSupport
import Foundation
import Logging
import Synchronization

/// Cache writes that the run does not wait for: they are queued in order and written
/// while the run goes on merging, sorting and printing; the command waits for them
/// (``drain()``) before it exits.
///
/// A cold run of a 20 MB upstream spent a fifth of its time writing that body into the
/// cache before it could print a card. The writes go in batches: whatever queued while
/// the last batch was written is the next one, one transaction for its responses and one
/// for its pages. A cold run of 500 feeds spent longer committing a transaction per
/// response and per page than parsing the feeds. Order matters: a mapped page names the
/// stamps of the responses it came from, and a batch writes its responses before its
/// pages. Responses on their way into the cache are served from here meanwhile, so a run
/// that starts before the write lands (`serve`) does not ask the upstream again.
public final class WriteBehind: Sendable {
    /// A page to remember, encoded when its batch is written (behind the run).
    package struct PendingPage: Sendable {
        let key: String
        let responses: [String: Double]
        let page: SourcePage
        let created: Date
    }

    private struct Queue {
        var responses: [CacheWrite] = []
        var pages: [PendingPage] = []
        /// The task writing batches until the queue is empty.
        var writer: Task<Void, Never>?
    }

    private let cache: any ResponseCache
    private let pageStore: any PageMemoStore
    private let logger: Logger
    private let queue = Mutex(Queue())
    private let storing = Mutex<[String: CachedResponse]>([:])

    public init(cache: any ResponseCache, pages: any PageMemoStore, logger: Logger) {
        self.cache = cache
        self.pageStore = pages
        self.logger = logger
    }

    /// Queues storing `response`, a new body; until it is written, ``response(forKey:)``
    /// answers with it.
    package func store(_ response: CachedResponse) {
        storing.withLock { $0[response.key] = response }
        enqueue(response: .put(response))
    }

    /// Queues marking the stored `response` fresh as of its `fetchedAt` (a 304 confirmed
    /// it); until that is written, ``response(forKey:)`` answers with it.
    package func confirm(_ response: CachedResponse) {
        storing.withLock { $0[response.key] = response }
        enqueue(response: .touch(key: response.key, fetchedAt: response.fetchedAt, maxAge: response.maxAge))
    }

    /// ``confirm(_:)`` without the body at hand: the stored response under `key` is fresh
    /// as of `fetchedAt`.
    package func touch(key: String, fetchedAt: Date, maxAge: Double?) {
        storing.withLock { storing in
            storing[key]?.fetchedAt = fetchedAt
            storing[key]?.maxAge = maxAge
        }
        enqueue(response: .touch(key: key, fetchedAt: fetchedAt, maxAge: maxAge))
    }

    /// Queues dropping the stored response under `key`.
    package func forget(key: String) {
        enqueue(response: .forget(key: key))
    }

    /// Queues remembering `page` under `key`, after the responses queued before it.
    package func remember(_ page: SourcePage, key: String, readFrom responses: [String: Double]) {
        let pending = PendingPage(key: key, responses: responses, page: page, created: Date())
        startingWriter { $0.pages.append(pending) }
    }

    /// The response being written under `key`, if any.
    package func response(forKey key: String) -> CachedResponse? {
        storing.withLock { $0[key] }
    }

    /// Returns once every write queued so far, and any queued while waiting, is done.
    public func drain() async {
        while let writer = queue.withLock({ $0.writer }) {
            await writer.value
        }
    }

    private func enqueue(response write: CacheWrite) {
        startingWriter { $0.responses.append(write) }
    }

    private func startingWriter(_ add: (inout Queue) -> Void) {
        queue.withLock { queue in
            add(&queue)
            if queue.writer == nil { queue.writer = Task { await self.writeBatches() } }
        }
    }

    private func writeBatches() async {
        while let (responses, pages) = queue.withLock({ queue -> ([CacheWrite], [PendingPage])? in
            guard !queue.responses.isEmpty || !queue.pages.isEmpty else {
                queue.writer = nil
                return nil
            }
            defer { queue.responses = []; queue.pages = [] }
            return (queue.responses, queue.pages)
        }) {
            if !responses.isEmpty {
                do {
                    try await cache.apply(responses)
                } catch {
                    // A cache write that fails costs the next run a request, never this run its cards.
                    logger.warning("aggregate: cache write failed: \(PlainWords.describe(error))")
                }
                storing.withLock { storing in
                    for case .put(let response) in responses where storing[response.key]?.storedAt == response.storedAt { storing[response.key] = nil }
                    for case .touch(let key, let fetchedAt, _) in responses where storing[key]?.fetchedAt == fetchedAt {
                        storing[key] = nil
                    }
                }
            }
            if !pages.isEmpty {
                let records = pages.map {
                    MappedPageRecord(key: $0.key, responses: $0.responses, page: MappedPageCoding.encode($0.page), created: $0.created)
                }
                try? await pageStore.put(records)
            }
        }
    }
}
