import FeedEngine
import Foundation
import Metrics
import Prometheus

/// What `/metrics` tells Prometheus (`serve --metrics`), recorded through swift-metrics
/// and written in the text format by swift-prometheus: requests by route and status, their
/// latency, rendered-response cache hits and misses, upstream refreshes by source and
/// outcome, and each source's data age. Without `--metrics` nothing is recorded.
package struct ServeMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry?
    /// The factory every metric is made by: this server's own, handed to each metric, not
    /// installed process-wide (`MetricsSystem.bootstrap`), so two servers in one process
    /// (tests) count apart.
    private let factory: PrometheusMetricsFactory?

    /// Latency buckets: a cached answer takes well under a millisecond; a rendering, more.
    package static let buckets: [Duration] = [.microseconds(250), .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10),
                                      .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5)]

    /// Metrics recorded into a registry of their own.
    package static func enabled() -> ServeMetrics {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = buckets
        return ServeMetrics(registry: registry, factory: factory)
    }

    package static let disabled = ServeMetrics(registry: nil, factory: nil)

    package func request(route: String, status: Int, duration: Duration) {
        guard let factory else { return }
        Counter(label: "aggregate_http_requests_total", dimensions: [("route", route), ("status", String(status))], factory: factory).increment()
        Metrics.Timer(label: "aggregate_http_request_duration_seconds", dimensions: [("route", route)], factory: factory).recordInterval(duration)
    }

    package func responseCache(hit: Bool) {
        guard let factory else { return }
        Counter(label: "aggregate_response_cache_total", dimensions: [("result", hit ? "hit" : "miss")], factory: factory).increment()
    }

    package func refreshed(_ source: String, outcome: SourceOutcome) {
        guard let factory else { return }
        let result = outcome.failure != nil ? "failed" : outcome.origin.map { "fallback_\($0.rawValue)" } ?? "ok"
        Counter(label: "aggregate_upstream_refreshes_total", dimensions: [("source", source), ("outcome", result)], factory: factory).increment()
    }

    /// An upstream response handed to a source to decode, `by` a reader's `request` or the
    /// background `refresh`.
    package func bodyDecoded(by: String) {
        guard let factory else { return }
        Counter(label: "aggregate_upstream_bodies_decoded_total", dimensions: [("by", by)], factory: factory).increment()
    }

    /// Cards on which a filter rule ran out of time, by the rule's place in Sources.yml.
    package func ruleTimedOut(_ timeout: SourceOutcome.RuleTimeout) {
        guard let factory else { return }
        Counter(label: "aggregate_filter_rule_timeouts_total", dimensions: [("rule", timeout.location.description)], factory: factory).increment(by: timeout.cards)
    }

    /// The text format, with each source's data age as of now.
    package func exposition(ages: [String: Double]) -> [UInt8] {
        guard let registry, let factory else { return [] }
        for (source, age) in ages {
            Gauge(label: "aggregate_source_data_age_seconds", dimensions: [("source", source)], factory: factory).record(age)
        }
        return registry.emitToBuffer()
    }
}

extension Metrics.Timer {
    package func recordInterval(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
