import ServeAccess
import ServeHTTP
import FeedCore
import FeedEngine
import Synchronization

/// Where `serve` tells of filter rules that ran out of time: each in `/metrics`, by its
/// place in Sources.yml, and on stderr once per rule for the life of the process (a rule
/// that runs out on every refresh would otherwise fill the log).
final class RuleTimeoutReporter: Sendable {
    private let metrics: ServeMetrics
    private let log: @Sendable (String) -> Void
    private let said = Mutex<Set<ConfigLocation>>([])

    init(metrics: ServeMetrics, log: @escaping @Sendable (String) -> Void) {
        self.metrics = metrics
        self.log = log
    }

    func report(_ outcomes: [SourceOutcome]) {
        for outcome in outcomes {
            for timeout in outcome.ruleTimeouts {
                metrics.ruleTimedOut(timeout)
                if said.withLock({ $0.insert(timeout.location).inserted }) { log("\(outcome.id): \(timeout)") }
            }
        }
    }
}
