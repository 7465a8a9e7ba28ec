import Foundation
import Synchronization

/// The server's mutable state: per-route scenarios and the request log. Tests change it
/// between (or during) runs of the binary.
public final class FixtureControl: Sendable {
    private struct State {
        var edits: [String: [DataEdit]] = [:]
        var scenarios: [String: [Fault]] = [:]
        var served: [String: Int] = [:]
        var log: [LoggedRequest] = []
        var sinks: [String: [SinkDelivery]] = [:]
    }

    private let state = Mutex(State())

    public init(scenarios: [String: [Fault]] = [:]) {
        state.withLock { $0.scenarios = scenarios }
    }

    /// Request n of `route` (from 0, counted from now) gets `steps[n]`; the last step
    /// repeats. An empty list restores normal behaviour.
    public func set(_ route: String, _ steps: [Fault]) {
        state.withLock {
            $0.scenarios[route] = steps
            $0.served[route] = 0
        }
    }

    /// Adds edits to `route`'s data; they apply to every answer from now on.
    public func edit(_ route: String, _ edits: DataEdit...) {
        state.withLock { $0.edits[route, default: []] += edits }
    }

    /// The recorded data again on `route`.
    public func clearEdits(_ route: String) {
        state.withLock { $0.edits[route] = nil }
    }

    func edits(for route: String) -> [DataEdit] {
        state.withLock { $0.edits[route] ?? [] }
    }

    /// Normal behaviour everywhere; the log is kept.
    public func reset() {
        state.withLock {
            $0.scenarios = [:]
            $0.served = [:]
        }
    }

    /// Every request so far, in arrival order.
    public var requests: [LoggedRequest] {
        state.withLock { $0.log }.sorted { $0.arrival < $1.arrival }
    }

    public func requests(to route: String) -> [LoggedRequest] {
        requests.filter { $0.route == route }
    }

    public func clearLog() {
        state.withLock { $0.log = [] }
    }

    func nextFault(for route: String) -> Fault {
        state.withLock {
            guard let steps = $0.scenarios[route], !steps.isEmpty else { return .none }
            let index = $0.served[route, default: 0]
            $0.served[route] = index + 1
            return steps[min(index, steps.count - 1)]
        }
    }

    func record(_ request: LoggedRequest) {
        state.withLock { $0.log.append(request) }
    }

    func record(_ delivery: SinkDelivery) {
        state.withLock { $0.sinks[delivery.sink, default: []].append(delivery) }
    }

    /// What the webhook sink `name` accepted (`POST /_sink/NAME`), in order, once per
    /// `Idempotency-Key` as a receiver honouring it would keep them: a repeat is answered
    /// 200 and not kept again.
    public func deliveries(to sink: String) -> [SinkDelivery] {
        var keys = Set<String>()
        return sinkPosts(to: sink).filter { $0.idempotencyKey.map { keys.insert($0).inserted } ?? true }
    }

    /// Every POST the sink accepted, repeats included.
    public func sinkPosts(to sink: String) -> [SinkDelivery] {
        state.withLock { $0.sinks[sink] ?? [] }
    }
}
