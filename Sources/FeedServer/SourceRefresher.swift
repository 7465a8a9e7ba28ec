import ServeAccess
import ServeHTTP
import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import FeedState
import FeedSupport
import Foundation
import ServiceLifecycle
import Synchronization

/// Fetches every enabled source again before its copy goes stale, so readers never wait on
/// an upstream while a copy exists (stale-while-revalidate). Each source on its own clock:
/// its `refresh:` interval (default its `cache_ttl`, at least ``minimumInterval``), at
/// 80–95 % of it so the copy is renewed before it expires, the jitter keeping sources and
/// replicas apart. A source that fails is tried again after 5–10 s, then 10–20 s, 20–40 s…
/// up to half to all of ``longestBackoff``, and meanwhile serves its fallback (for a source
/// the store holds, what the store keeps: no fallback is read). The wait is drawn in its
/// span ("equal jitter") so that sources failing together — their host down, the network
/// gone — are not tried again together: 500 such sources retried in waves at the same
/// second, and each wave took the cores from readers (one page in a hundred at 20–40 ms).
///
/// With a card store, what a refresh answered live is recorded there, and readers read the
/// store (``RefreshedSources``); a source's version moves on when the store's change
/// counter for it moves (noticed by its refresh, or within a second when another process
/// wrote: ``followStore()``) or its state (live, cache, snapshot, failed) changes, which
/// retires every rendered response built from the old one. A source the store does not
/// hold is versioned by a fingerprint of the cards its refresh got.
struct SourceRefresher: Service {
    /// What to refresh, and with which runners: one per configuration (a reload of
    /// Sources.yml sends a new one).
    struct Plan: Sendable {
        /// The enabled sources.
        let sources: [SourceConfig]
        /// A runner whose transports revalidate every response (`refresh`).
        let runner: FeedRunner
        /// ``runner`` without fallbacks (``LiveTierOnly``), for a source the store holds.
        let liveRunner: FeedRunner
        /// The readers' runner (any cached copy): what a replica without the lease reads
        /// of a source the store does not hold.
        let reader: FeedRunner
        /// How long the store keeps each source's cards.
        let keep: @Sendable (String) -> KeepPolicy
    }

    /// The plan at start-up.
    let plan: Plan
    /// Later plans, each replacing the one before: a source whose settings are unchanged
    /// keeps its refresh (its clock, its backoff); the others stop or start.
    let replans: AsyncStream<(plan: Plan, unchanged: Set<String>)>
    let versions: SourceVersions
    let responses: any RenderedResponseCache
    let health: SourceHealth
    let metrics: ServeMetrics
    let ruleTimeouts: RuleTimeoutReporter
    /// Taken for a refresh, so that of several replicas on one state one refreshes a
    /// source at a time; the others read what it recorded.
    let leases: (any RefreshLeases)?
    /// Where the lease holder records what each refresh answered live, and readers read.
    let store: (any CardStore)?
    /// The search index over the store, brought up to date in the background.
    let searchIndex: (any CardSearchIndex)?
    /// Where readers learn what to read of each source (nil without a store).
    let refreshed: RefreshedSources?
    /// A line for stderr (a failure to record).
    let say: @Sendable (String) -> Void
    /// What the waits between refreshes are measured on.
    let clock: any Clock<Duration>
    /// The store's counter of each source as last acted on (``StoreCounters``).
    let seen = StoreCounters()
    /// How often ``followStore()`` reads the store's counters.
    static let storeFollowInterval = Duration.seconds(1)
    /// How far apart other processes' writes are followed while they keep coming.
    static let foreignWriteSpacing = Duration.seconds(10)

    static let minimumInterval = 5.0
    static let firstBackoff = 10.0
    static let longestBackoff = 600.0

    /// The longest wait after `failures` failures in a row: 10 s, 20 s, 40 s… up to
    /// ``longestBackoff``; the wait itself is drawn from its second half.
    static func backoff(afterFailures failures: Int) -> Double {
        min(firstBackoff * pow(2, Double(max(failures, 1) - 1)), longestBackoff)
    }

    static func interval(_ source: SourceConfig) -> Double {
        max(source.refresh ?? source.cacheTTL, minimumInterval)
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.followStore() }
                group.addTask { await self.indexRecorded() }
                // Each source's refresh runs until its stop stream ends.
                var running: [String: AsyncStream<Void>.Continuation] = [:]
                func start(_ sources: [SourceConfig], _ plan: Plan) async {
                    await self.answerFromStore(sources)
                    for source in sources {
                        let (stop, stopping) = AsyncStream<Void>.makeStream()
                        running[source.id] = stopping
                        group.addTask {
                            await withTaskGroup(of: Void.self) { refresh in
                                refresh.addTask { await self.loop(source, plan) }
                                refresh.addTask { for await _ in stop {} }
                                // The stop (or the end of the service) ends the refresh.
                                await refresh.next()
                                refresh.cancelAll()
                            }
                        }
                    }
                }
                await start(plan.sources, plan)
                for await (plan, unchanged) in replans {
                    for (id, stopping) in running where !unchanged.contains(id) {
                        stopping.finish()
                        running[id] = nil
                    }
                    await start(plan.sources.filter { running[$0.id] == nil }, plan)
                }
                for stopping in running.values { stopping.finish() }
            }
        }
        refreshed?.stop()
    }

    /// What others write to the store — `aggregate refresh` from cron, a purge, the replica
    /// holding a source's lease — followed here: every source's counter read once a second
    /// (one small table), and the sources that moved are moved on softly together: a page built
    /// from them is answered as it was while it is rendered again beside the request (once a
    /// page), so readers never wait for another process's write. While such writes keep
    /// coming (a purge moves sources several times a second for a minute, cron's refresh of
    /// 500 feeds one after another), they are followed at most every ``foreignWriteSpacing``:
    /// followed each second, every page was rendered again each second and the renderings
    /// took the core the purge left, readers' p99 189–234 ms (docs/performance.md). A lone
    /// write is followed within a second. On the wall clock, not the refreshes'.
    private func followStore() async {
        guard let store else { return }
        var first = true
        var lastFollowed: ContinuousClock.Instant?
        while !Task.isCancelled {
            let now = ContinuousClock.now
            if lastFollowed.map({ now - $0 >= Self.foreignWriteSpacing }) ?? true, let held = try? await store.versions() {
                // The first look sets where each source stands: what a source's own first
                // refresh has not noted yet was there before this serve began.
                var moved = false
                for (source, version) in held where seen.noteOthers(source, version) && !first {
                    versions.moveSoftly(source)
                    moved = true
                }
                if moved { lastFollowed = now }
                first = false
            }
            try? await Task.sleep(for: Self.storeFollowInterval)
        }
    }

    /// What any process records — this serve's refreshes, cron's `aggregate refresh` — is
    /// indexed for search here within a second, in the background, not by the first reader's
    /// search after it. When nothing was recorded, a look at one small table.
    private func indexRecorded() async {
        guard let searchIndex else { return }
        while !Task.isCancelled {
            _ = try? await searchIndex.updateSearch()
            try? await Task.sleep(for: Self.storeFollowInterval)
        }
    }

    /// Retires every response built from `source`: its version moves on, its kept answers go.
    private func retire(_ source: String) async {
        versions.bump(source)
        await responses.invalidate(source: source)
    }

    /// A source the store already holds is answered from it at once: a restart (or a
    /// reload) does not keep readers waiting on the first refresh.
    private func answerFromStore(_ sources: [SourceConfig]) async {
        guard let store, let held = try? await store.versions() else { return }
        for source in sources where held[source.id] != nil {
            refreshed?.set(source.id, .init(outcome: SourceOutcome(id: source.id, url: source.url), apart: false))
        }
    }

    /// What readers of a source are given, as far as retiring responses goes (what the
    /// store holds of it moves by ``StoreCounters``).
    private struct Served: Equatable {
        /// What pages show of the source's status (live, which fallback, failed), not the
        /// failure's wording: with it, every wave of retries of an unreachable upstream
        /// ("after 3 tries", "moments ago; not asked again yet") retired every page.
        var status: SourceHealth.Status
        var fingerprint: UInt64?
    }

    private func loop(_ source: SourceConfig, _ plan: Plan) async {
        var served: Served?
        var failures = 0
        let holder = UUID().uuidString
        while !Task.isCancelled {
            let interval = Self.interval(source)
            var leased = true
            // Whether who refreshes is known: without the database, every replica refreshes
            // for itself, and then no more often than the interval (not on the backoff).
            var leaseKnown = true
            if let leases {
                do {
                    leased = try await leases.take(source: source.id, holder: holder, seconds: interval)
                } catch {
                    leaseKnown = false
                }
            }
            let (cards, fetched, storeVersion, storeMoved) = await refresh(source, plan, leased: leased)
            guard !Task.isCancelled else { return }
            var outcome = fetched
            // A failed refresh of a source the store holds: readers are served what it
            // kept, the last good copy and older, as a cache fallback would serve its copy.
            if storeVersion != nil, case .failed(let message, _) = outcome.status {
                outcome.status = .fallback(.cache, liveFailure: message, servedBy: "the cards kept in the card store")
            }
            // Cards the store does not hold are held apart, in memory, and told apart by their
            // counter there; without a store, by a fingerprint of what readers are given.
            var apartVersion: UInt64?
            if storeVersion == nil {
                apartVersion = if let refreshed { UInt64(await refreshed.holdApart(source.id, cards: cards)) } else { Self.fingerprint(cards, outcome) }
            }
            let now = Served(status: SourceHealth.Status(outcome.status), fingerprint: apartVersion)
            refreshed?.set(source.id, .init(outcome: outcome, apart: storeVersion == nil))
            // What this refresh recorded, or read of the lease holder's records, is retired
            // at once (its readers ask next); a move by any other writer, ``followStore()``
            // retires with the others of that second.
            if now != served || storeMoved {
                served = now
                await retire(source.id)
            }
            let failed = outcome.failure != nil || outcome.origin != nil
            failures = failed ? failures + 1 : 0
            var delay = failed
                ? Self.backoff(afterFailures: failures) * Double.random(in: 0.5...1)
                : interval * Double.random(in: 0.8...0.95)
            if !leaseKnown { delay = max(delay, interval) }
            if leased { metrics.refreshed(source.id, outcome: outcome) }
            ruleTimeouts.report([outcome])
            await health.refreshed(outcome, next: Date().addingTimeInterval(delay))
            try? await clock.sleep(for: .seconds(delay))
        }
    }

    /// One refresh of `source`: its cards and outcome, the store's change counter for it
    /// after recording (nil when the store does not hold it), and whether that counter moved
    /// since `serve` last noted it. The lease holder fetches and records; a replica without
    /// the lease reads the holder's records, or, for a source the store does not hold, the
    /// shared cache.
    private func refresh(_ source: SourceConfig, _ plan: Plan, leased: Bool) async -> ([Card], SourceOutcome, Int?, storeMoved: Bool) {
        let unknown = SourceOutcome(id: source.id, url: source.url)
        if !leased, let store, let version = try? await store.version(of: source.id) {
            return ([], unknown, version, seen.note(source.id, version))
        }
        let held = leased && store != nil ? (try? await store?.version(of: source.id)) != nil : false
        // The tag of the listing the store merged last: a listing the upstream confirms
        // whole (304) is then neither read nor written again, only seen.
        let storedTag = held ? (try? await store?.listingTag(of: source.id)) ?? nil : nil
        let storedTags = storedTag.map { [source.id: $0] } ?? [:]
        let collected = try? await (leased ? (held ? plan.liveRunner : plan.runner) : plan.reader).collect([source.id], storedTags: storedTags, eachRead: nil)
        await plan.runner.finishWrites()
        let outcome = collected?.outcomes.first ?? unknown
        guard let store else { return (collected?.cards ?? [], outcome, nil, false) }
        guard leased, let listings = collected?.listings, !listings.isEmpty else {
            let version = try? await store.version(of: source.id)
            return (collected?.cards ?? [], outcome, version, !leased && version.map { seen.note(source.id, $0) } ?? false)
        }
        // From the write to noting its counter, the counter is this serve's: the store's
        // look (``followStore()``) seeing it first took it for another process's write, and
        // then held back that process's next write ten seconds (seen in CI).
        seen.writing(source.id)
        // The store is a memory beside the answers: a failure to record changes nothing
        // readers get (they are given this refresh's cards), and the next one records.
        do {
            try await store.record(listings)
            _ = try await store.purge(plan.keep, now: Date(), limit: CardRetention.batch)
        } catch {
            _ = seen.wrote(source.id, version: nil)
            say("aggregate: \(source.id): cannot record its cards in the card store (\(PlainWords.describe(error))); its readers are given this refresh's cards")
            return (collected?.cards ?? [], outcome, nil, false)
        }
        let version = try? await store.version(of: source.id)
        return (collected?.cards ?? [], outcome, version, seen.wrote(source.id, version: version))
    }

    /// What the source gives now: its cards as printed, and where they came from.
    static func fingerprint(_ cards: [Card], _ outcome: SourceOutcome) -> UInt64 {
        var hash = FNV1a.hash(Array("\(outcome.status)".utf8))
        for card in cards {
            hash = FNV1a.hash(Array(JSONLines.line(for: card).utf8), seed: hash)
        }
        return hash
    }
}

/// Who refreshes which source, between replicas sharing one state.

/// The store's change counter of each source as `serve` last acted on it: a source's own
/// refresh and ``SourceRefresher``'s look at every counter both note what they see, and
/// whichever sees a new counter first retires the source's responses, once. While a
/// source's own refresh writes it, the look leaves it alone: the counter its write moves is
/// this serve's, not another process's.
final class StoreCounters: Sendable {
    private struct State {
        var counters: [String: Int] = [:]
        var writing: Set<String> = []
    }

    private let state = Mutex(State())

    /// Notes `version` of `source`: whether it differs from the one noted before (or none was).
    func note(_ source: String, _ version: Int) -> Bool {
        state.withLock { $0.counters.updateValue(version, forKey: source) != version }
    }

    /// ``note(_:_:)`` for what another process may have written: false for a source this
    /// serve is writing itself.
    func noteOthers(_ source: String, _ version: Int) -> Bool {
        state.withLock { state in
            guard !state.writing.contains(source) else { return false }
            return state.counters.updateValue(version, forKey: source) != version
        }
    }

    /// This serve starts writing `source`.
    func writing(_ source: String) {
        state.withLock { _ = $0.writing.insert(source) }
    }

    /// This serve's write of `source` is over and left `version` (nil: unknown): whether the
    /// counter moved.
    func wrote(_ source: String, version: Int?) -> Bool {
        state.withLock { state in
            state.writing.remove(source)
            guard let version else { return false }
            return state.counters.updateValue(version, forKey: source) != version
        }
    }
}
