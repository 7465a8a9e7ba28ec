import FeedCore
import Foundation

/// A ``DigestStore`` in memory, for tests: the same semantics, including the lock (held
/// within this process only).
public actor InMemoryDigestStore: DigestStore {
    private var memories: [String: DigestMemory] = [:]
    /// Per digest, the cards whose copy it does not keep (the card store holds them).
    private var held: [String: Set<String>] = [:]
    private var outboxes: [String: [OutgoingReport]] = [:]
    private var locked: Set<String> = []

    public init() {}

    public nonisolated func withLock<T>(digest: String, wait: Double, _ body: (DigestLock) async throws -> T) async throws -> T {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(wait * 1000)))
        while !(await acquire(digest)) {
            guard ContinuousClock.now < deadline else { throw DigestJob.Failure.busy(digest) }
            try await Task.sleep(for: .milliseconds(20))
        }
        do {
            let value = try await body(DigestLock(digest: digest))
            await release(digest)
            return value
        } catch {
            await release(digest)
            throw error
        }
    }

    private func acquire(_ digest: String) -> Bool {
        locked.insert(digest).inserted
    }

    private func release(_ digest: String) {
        locked.remove(digest)
    }

    public func memory(of digest: String, cards: [String: Card]) -> DigestMemory {
        var memory = memories[digest] ?? DigestMemory()
        // As a database keeps it: no copy of a card the card store holds.
        for (id, entry) in memory.entries where held[digest]?.contains(id) == true {
            memory.entries[id] = cards[id].map { card in
                var entry = entry
                entry.card = card
                return entry
            }
        }
        return memory
    }

    public func commit(_ plan: DigestPlan, under lock: DigestLock, now: Date, outbox: [OutgoingReport]) {
        let digest = lock.digest
        outboxes[digest, default: []] += outbox
        var memory = memories[digest] ?? DigestMemory()
        for entry in plan.writes {
            if plan.cardStoreHolds.contains(entry.cardID) {
                held[digest, default: []].insert(entry.cardID)
            } else {
                held[digest]?.remove(entry.cardID)
            }
            var stored = entry
            stored.reported = entry.reported || memory.entries[entry.cardID]?.reported == true
            stored.firstSeen = memory.entries[entry.cardID]?.firstSeen ?? entry.firstSeen
            memory.entries[entry.cardID] = stored
        }
        memory.knownSources.formUnion(plan.newlyKnownSources)
        memory.lastSuccess = now
        memories[digest] = memory
    }

    public func owed(by digest: String) -> [OutgoingReport] {
        // Oldest first; reports committed at the same time in the order committed.
        (outboxes[digest] ?? []).enumerated().sorted { ($0.element.created, $0.offset) < ($1.element.created, $1.offset) }.map(\.element)
    }

    public func delivered(_ report: OutgoingReport, digest: String) {
        outboxes[digest]?.removeAll { $0.target == report.target && $0.reportID == report.reportID }
    }
}
