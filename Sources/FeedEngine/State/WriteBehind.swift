import Synchronization

/// Cache writes that the run does not wait for: they run one after another, in the order
/// they were queued, while the run goes on merging, sorting and printing; the command
/// waits for them (``drain()``) before it exits.
///
/// A cold run of a 20 MB upstream spent a fifth of its time writing that body into the
/// cache before it could print a card. Order matters: a mapped page is remembered only
/// after the response it came from is stored, and it names that response's stamp.
/// Responses on their way into the cache are served from here meanwhile, so a run that
/// starts before the write lands (`serve`) does not ask the upstream again.
public final class WriteBehind: Sendable {
    private let tail = Mutex<Task<Void, Never>?>(nil)
    private let storing = Mutex<[String: CachedResponse]>([:])

    public init() {}

    /// Queues `work` after everything queued before it.
    func enqueue(_ work: @escaping @Sendable () async -> Void) {
        tail.withLock { tail in
            let previous = tail
            tail = Task {
                await previous?.value
                await work()
            }
        }
    }

    /// Queues the write of `response` with `write`; until it is done,
    /// ``response(forKey:)`` answers with it.
    func store(_ response: CachedResponse, with write: @escaping @Sendable () async -> Void) {
        storing.withLock { $0[response.key] = response }
        enqueue {
            await write()
            self.storing.withLock { storing in
                if storing[response.key]?.storedAt == response.storedAt { storing[response.key] = nil }
            }
        }
    }

    /// The response being written under `key`, if any.
    func response(forKey key: String) -> CachedResponse? {
        storing.withLock { $0[key] }
    }

    /// Returns once every write queued so far, and any queued while waiting, is done.
    public func drain() async {
        while let last = tail.withLock({ $0 }) {
            await last.value
            let done = tail.withLock { tail in
                guard tail == last else { return false }
                tail = nil
                return true
            }
            if done { return }
        }
    }
}
