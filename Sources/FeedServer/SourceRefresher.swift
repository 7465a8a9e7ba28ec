import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import FeedState
import FeedSupport
import Foundation
import ServiceLifecycle

/// Fetches every enabled source again before its copy goes stale, so readers are answered
/// from the cache and never wait on an upstream while a copy exists (stale-while-
/// revalidate). Each source on its own clock: its `refresh:` interval (default its
/// `cache_ttl`, at least ``minimumInterval``), at 80–95 % of it so the copy is renewed
/// before it expires, the jitter keeping sources and replicas apart. A source that fails
/// is tried again after 10 s, then 20 s, 40 s… up to ``longestBackoff``, and meanwhile
/// serves its fallback. When a refresh finds a source's cards or state changed, the
/// source's version moves on and every rendered response built from it is dropped.
struct SourceRefresher: Service {
    /// A runner whose transports revalidate every response (`refresh`).
    let runner: FeedRunner
    /// The readers' runner (any cached copy): what a replica without the lease reads.
    let reader: FeedRunner
    let sources: [SourceConfig]
    let versions: SourceVersions
    let responses: any RenderedResponseCache
    let health: SourceHealth
    let metrics: ServeMetrics
    let ruleTimeouts: RuleTimeoutReporter
    /// Taken for a refresh, so that of several replicas on one state one refreshes a
    /// source at a time; the others see the result through the shared cache.
    let leases: (any RefreshLeases)?
    /// What the waits between refreshes are measured on.
    let clock: any Clock<Duration>

    static let minimumInterval = 5.0
    static let firstBackoff = 10.0
    static let longestBackoff = 600.0

    static func interval(_ source: SourceConfig) -> Double {
        max(source.refresh ?? source.cacheTTL, minimumInterval)
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for source in sources {
                    group.addTask { await self.loop(source) }
                }
            }
        }
    }

    private func loop(_ source: SourceConfig) async {
        var fingerprint: UInt64?
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
            // A replica without the lease reads what the holder fetched, from the shared cache.
            let collected = try? await (leased ? runner : reader).collect([source.id])
            let (cards, outcomes) = (collected?.cards ?? [], collected?.outcomes ?? [])
            await runner.finishWrites()
            guard !Task.isCancelled else { return }
            let outcome = outcomes.first ?? SourceOutcome(id: source.id, url: source.url)
            let print = Self.fingerprint(cards, outcome)
            if print != fingerprint {
                fingerprint = print
                versions.bump(source.id)
                await responses.invalidate(source: source.id)
            }
            let failed = outcome.failure != nil || outcome.origin != nil
            failures = failed ? failures + 1 : 0
            var delay = failed
                ? min(Self.firstBackoff * pow(2, Double(failures - 1)), Self.longestBackoff)
                : interval * Double.random(in: 0.8...0.95)
            if !leaseKnown { delay = max(delay, interval) }
            if leased { metrics.refreshed(source.id, outcome: outcome) }
            ruleTimeouts.report(outcomes)
            await health.refreshed(outcome, next: Date().addingTimeInterval(delay))
            try? await clock.sleep(for: .seconds(delay))
        }
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
