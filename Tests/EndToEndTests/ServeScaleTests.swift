import FeedCore
import FeedSourceTesting
import Foundation
import FixtureServer
import Testing

/// `serve` for many readers (issue 31), as a process: readers answered while an upstream
/// holds the refresh. What the background refresh does round by round, the rendered
/// responses and `/metrics` are tested in process, on a test clock (FeedServerTests).
@Suite(.serialized) struct ServeScaleTests {
    /// Waits until every source has had its first background refresh.
    static func refreshed(_ served: ServeTests.Served, sources: Int) async throws {
        for _ in 0..<100 {
            let health = try await ServeTests.get(served.base + "/healthz").body
            if health.components(separatedBy: "\"next_refresh\"").count - 1 == sources { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the sources were not refreshed in 10 s")
    }

    /// While the upstream takes 4 s for every answer, readers are answered from the copy;
    /// the refresh happens behind them, and its new data replaces the feed. Asserted on
    /// the upstream's own log, not on a reader's time (a loaded machine may take a second
    /// to answer anyone): readers were asked and answered while the refresh's request was
    /// held upstream, so none waited for it.
    @Test func readersNeverWaitForARefreshingUpstream() async throws {
        try await ServeTests.withServe(sources: FixtureWorld.only("cabify"), extra: ["cabify": "    refresh: 5\n"]) { session, served in
            try await Self.refreshed(served, sources: 1)
            let first = try await ServeTests.get(served.base + "/feed.jsonl")
            #expect(first.status == 200 && !first.body.contains("HOODIE"))
            session.server.control.set("cabify", [Fault(latencyMs: 4000)])
            session.server.control.edit("cabify", .add(list: "products", item: ["code": "HOODIE", "name": "Cabify Hoodie", "price": 30]))
            var answered: [(asked: Date, answered: Date)] = []
            var latest = first
            let until = ContinuousClock.now + .seconds(25)
            while ContinuousClock.now < until, !latest.body.contains("HOODIE") {
                let asked = Date()
                latest = try await ServeTests.get(served.base + "/feed.jsonl")
                answered.append((asked, Date()))
                #expect(latest.status == 200)
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(latest.body.contains("cabify:HOODIE"), "the refresh did not bring the new product")
            #expect(latest.headers.first(name: "etag") != first.headers.first(name: "etag"))
            // The upstream was asked by the refresh, which waited its 4 s.
            let held = try #require(session.server.control.requests(to: "cabify").last { $0.finish.timeIntervalSince($0.arrival) >= 3.9 })
            let answeredMeanwhile = answered.filter { $0.asked > held.arrival && $0.answered < held.finish }
            #expect(!answeredMeanwhile.isEmpty, "no reader was answered while the refresh waited upstream")
        }
    }
}
