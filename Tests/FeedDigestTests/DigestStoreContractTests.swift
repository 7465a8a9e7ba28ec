import FeedConfig
import FeedCore
@testable import FeedDigest
import FeedEngine
import FeedSourceTesting
import FeedState
import FeedStatePostgres
import Foundation
import Testing

/// The digest store keeps the same promises in memory, in SQLite and in PostgreSQL.
@Suite struct DigestStoreContractTests {
    typealias Backend = StateUnderTest

    /// Opens a fresh state of `backend`, runs `body`, and removes it.
    func withState(_ backend: Backend, _ body: (EngineState) async throws -> Void) async throws {
        try await backend.with(body)
    }

    let t1 = Date(timeIntervalSince1970: 1_800_000_000.25)
    let t2 = Date(timeIntervalSince1970: 1_800_000_600.5)

    func card(_ id: String, _ price: String) -> Card {
        Card(source: "shop", upstreamID: id, kind: .item, title: "Item \(id)",
             price: Decimal(string: price).map { Price(amount: $0, currency: "EUR") })
    }

    /// A row whose card the card store keeps holds no copy: the digest's memory has it
    /// only with the card store's cards, and one the card store no longer has is forgotten.
    @Test(arguments: Backend.all) func aDigestKeepsNoCopyOfACardTheCardStoreHolds(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = try #require(state.digestStore)
            let kept = card("kept", "10"), own = card("own", "5")
            try await store.withLock(digest: "daily", wait: 0) { lock in
                var plan = DigestPlan.make(memory: [:], cards: [kept, own], available: ["shop"], knownSources: [], options: DigestOptions(), now: t1)
                plan.cardStoreHolds = [kept.id]
                try await store.commit(plan, under: lock, now: t1, outbox: [])
            }
            #expect(try await store.memory(of: "daily", cards: [:]).entries.keys.sorted() == [own.id])
            var renamed = kept
            renamed.title = "Renamed in the card store"
            let memory = try await store.memory(of: "daily", cards: [kept.id: renamed])
            #expect(memory.entries.keys.sorted() == [kept.id, own.id])
            #expect(memory.entries[kept.id]?.card == renamed)
            #expect(memory.entries[own.id]?.card == own)
        }
    }

    @Test(arguments: Backend.all) func aDigestRemembersWhatItCommitted(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = try #require(state.digestStore)
            #expect(try await store.memory(of: "daily", cards: [:]) == DigestMemory())
            let cards = [card("1", "7.50"), card("2", "0.1")]
            let baseline = DigestPlan.make(memory: [:], cards: cards, available: ["shop"], knownSources: [],
                                           options: DigestOptions(), now: t1)
            try await store.commitLocked(baseline, digest: "daily", now: t1, outbox: [])
            let memory = try await store.memory(of: "daily", cards: [:])
            #expect(memory.knownSources == ["shop"])
            #expect(memory.lastSuccess == t1)
            #expect(memory.entries.keys.sorted() == ["shop:1", "shop:2"])
            #expect(memory.entries["shop:1"]?.price == Decimal(string: "7.50"))
            #expect(memory.entries["shop:2"]?.card == cards[1])
            #expect(memory.entries["shop:1"]?.firstSeen == t1)
            #expect(try await store.memory(of: "weekly", cards: [:]) == DigestMemory())

            // A drop, reported and delivered: the first sighting stays, the price moves.
            let cheaper = [card("1", "6"), cards[1]]
            let drop = DigestPlan.make(memory: memory.entries, cards: cheaper, available: ["shop"], knownSources: memory.knownSources,
                                       options: DigestOptions(), now: t2)
            #expect(drop.items.map(\.change) == [.priceDrop])
            let file = OutgoingReport(target: FileTarget.key(path: "/tmp/digest.md"), reportID: "r1", created: t2,
                                      payload: DeliveryPayload(body: "# daily\n"))
            try await store.commitLocked(drop, digest: "daily", now: t2, outbox: [file])
            let after = try await store.memory(of: "daily", cards: [:])
            #expect(after.entries["shop:1"]?.price == 6)
            #expect(after.entries["shop:1"]?.reported == true)
            #expect(after.entries["shop:1"]?.firstSeen == t1)
            #expect(after.lastSuccess == t2)
            #expect(try await store.owed(by: "daily") == [file])
            try await store.delivered(file, digest: "daily")
            #expect(try await store.owed(by: "daily").isEmpty)
        }
    }

    @Test(arguments: Backend.all) func reportsOwedToTargetsAndAlertStatesAreKeptWithTheState(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = try #require(state.digestStore)
            var entry = DigestEntry(card: card("1", "5"), firstSeen: t1, lastSeen: t1, price: 5, reported: true, present: true)
            entry.holding = ["{price_below: 6}", "out_of_stock"]
            let plan = DigestPlan(items: [], writes: [entry], newlyKnownSources: ["shop"], baselineCount: 0, deferred: 0)
            let payload = DeliveryPayload(body: "{\"text\":\"é\"}", headers: ["Content-Type": "application/json"])
            let first = OutgoingReport(target: "webhook ${HOOK}", reportID: "r1", created: t1, payload: payload)
            let second = OutgoingReport(target: "file /tmp/x.md", reportID: "r1", created: t1, payload: DeliveryPayload(body: "text"))
            try await store.commitLocked(plan, digest: "alerts", now: t1, outbox: [first, second])
            // Committed at the same time (`--date`) but later: owed after, whatever its id.
            let sameTime = OutgoingReport(target: "file /tmp/x.md", reportID: "r0", created: t1, payload: DeliveryPayload(body: "0"))
            try await store.commitLocked(plan, digest: "alerts", now: t1, outbox: [sameTime])
            let later = OutgoingReport(target: "webhook ${HOOK}", reportID: "r2", created: t2, payload: DeliveryPayload(body: "2"))
            try await store.commitLocked(plan, digest: "alerts", now: t2, outbox: [later])
            #expect(try await store.memory(of: "alerts", cards: [:]).entries["shop:1"]?.holding == ["{price_below: 6}", "out_of_stock"])
            #expect(try await store.owed(by: "alerts") == [first, second, sameTime, later])
            #expect(try await store.owed(by: "daily").isEmpty)
            try await store.delivered(first, digest: "alerts")
            #expect(try await store.owed(by: "alerts") == [second, sameTime, later])
        }
    }

    /// The PostgreSQL lock lives on a connection of its own, and the commit runs on that
    /// connection: when it dies between the lock and the commit (the server restarted, a
    /// network cut, an administrator), nothing is committed, and the next run, under a new
    /// lock, commits the same plan once.
    @Test(.enabled(if: PostgresTestServer.isAvailable, "\(PostgresTestServer.skipReason)"))
    func aCommitAfterTheLocksConnectionDiedCommitsNothing() async throws {
        try await withState(.postgres) { state in
            let store = try #require(state.digestStore)
            let database = try #require(state.backend as? PostgresState).database
            let plan = DigestPlan.make(memory: [:], cards: [card("1", "7.50"), card("2", "3")], available: ["shop"], knownSources: [],
                                       options: DigestOptions(), now: t1)
            await #expect(throws: (any Error).self) {
                try await store.withLock(digest: "daily", wait: 1) { lock in
                    let killed = try await database.query("""
                        SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted
                          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                        """)
                    #expect(killed.count == 1)
                    try await store.commit(plan, under: lock, now: t1, outbox: [])
                }
            }
            #expect(try await store.memory(of: "daily", cards: [:]) == DigestMemory())
            try await store.commitLocked(plan, digest: "daily", now: t2, outbox: [])
            let memory = try await store.memory(of: "daily", cards: [:])
            #expect(memory.entries.keys.sorted() == ["shop:1", "shop:2"])
            #expect(memory.lastSuccess == t2)
        }
    }

    @Test(arguments: Backend.all) func oneRunOfADigestAtATime(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let store = try #require(state.digestStore)
            let (entered, signal) = AsyncStream.makeStream(of: Void.self)
            let (release, finish) = AsyncStream.makeStream(of: Void.self)
            async let holder: Void = store.withLock(digest: "daily", wait: 1) { _ in
                signal.yield()
                for await _ in release {}
            }
            for await _ in entered { break }
            await #expect(throws: DigestJob.Failure.self) {
                try await store.withLock(digest: "daily", wait: 0.2) { _ in }
            }
            // Another digest is not held up.
            #expect(try await store.withLock(digest: "weekly", wait: 0.2) { _ in 42 } == 42)
            finish.finish()
            try await holder
            #expect(try await store.withLock(digest: "daily", wait: 1) { _ in "free" } == "free")
        }
    }
}

extension DigestStore {
    /// Commits under the digest's lock, taken for this one commit.
    func commitLocked(_ plan: DigestPlan, digest: String, now: Date, outbox: [OutgoingReport]) async throws {
        try await withLock(digest: digest, wait: 1) { lock in
            try await commit(plan, under: lock, now: now, outbox: outbox)
        }
    }
}
