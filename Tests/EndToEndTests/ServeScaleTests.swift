import FeedCore
import FeedSourceTesting
import Foundation
import FixtureServer
import Testing

/// `serve` for many readers (issue 31): rendered responses kept until a source changes,
/// sources refreshed in the background, `/metrics`.
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

    /// Fifty readers of a cold feed: rendered once, the rest are answered the same bytes;
    /// `/metrics` counts it.
    @Test func fiftyReadersOfAColdFeedRenderItOnce() async throws {
        try await ServeTests.withServe(arguments: ["--metrics"]) { session, served in
            try await Self.refreshed(served, sources: 2)
            let upstream = session.requests.count
            let answers = try await withThrowingTaskGroup(of: ServeTests.Answer.self) { group in
                for _ in 0..<50 { group.addTask { try await ServeTests.get(served.base + "/feed.atom?per_page=7", headers: [("Accept-Encoding", "gzip")]) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.status == 200 })
            #expect(Set(answers.map { $0.headers.first(name: "etag") ?? "" }).count == 1)
            #expect(answers.allSatisfy { $0.headers.first(name: "content-encoding") == "gzip" })
            // Readers asked no upstream: the background refresh had filled the cache.
            #expect(session.requests.count == upstream)
            // Kept: ten more readers render nothing and ask no upstream.
            for _ in 0..<10 { _ = try await ServeTests.get(served.base + "/feed.atom?per_page=7", headers: [("Accept-Encoding", "gzip")]) }
            #expect(session.requests.count == upstream)
            // Labelled by the router's path: a card's id is no label, nor a path no route serves.
            #expect(try await ServeTests.get(served.base + "/cards/cabify:NO-SUCH-PRODUCT").status == 404)
            #expect(try await ServeTests.get(served.base + "/no/such/route").status == 404)
            let metrics = try await ServeTests.get(served.base + "/metrics")
            #expect(metrics.status == 200)
            #expect(Self.parsesAsPrometheusText(metrics.body))
            #expect(metrics.headers.first(name: "content-type")?.hasPrefix("text/plain; version=0.0.4") == true)
            let lines = metrics.body.split(separator: "\n").map(String.init)
            #expect(lines.contains(#"aggregate_response_cache_total{result="miss"} 1"#))
            #expect(lines.contains(#"aggregate_response_cache_total{result="hit"} 59"#))
            #expect(lines.contains(#"aggregate_http_requests_total{route="/feed.atom",status="200"} 60"#))
            #expect(lines.contains(#"aggregate_http_requests_total{route="/cards/{id}",status="404"} 1"#))
            #expect(lines.contains(#"aggregate_http_requests_total{route="NotFound",status="404"} 1"#))
            #expect(lines.contains { $0.hasPrefix("aggregate_http_request_duration_seconds_bucket{route=\"/feed.atom\"") })
            #expect(lines.contains { $0.hasPrefix("aggregate_upstream_refreshes_total{") && $0.contains(#"source="cabify""#) && $0.contains(#"outcome="ok""#) })
            #expect(lines.contains { $0.hasPrefix("aggregate_source_data_age_seconds{source=\"target\"}") })
        }
    }

    /// Every line of the Prometheus text format: a comment, or `name{labels} value`.
    static func parsesAsPrometheusText(_ text: String) -> Bool {
        let sample = #/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? -?([0-9.e+-]+|\+Inf|NaN)$/#
        return !text.isEmpty && text.split(separator: "\n").allSatisfy { line in
            line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") || String(line).wholeMatch(of: sample) != nil
        }
    }

    /// A source whose data changes retires exactly the responses built from it: the feed
    /// of that source and the merged feed render again; another source's feed stays kept,
    /// with its ETag.
    @Test func aChangedSourceRetiresExactlyTheResponsesBuiltFromIt() async throws {
        try await ServeTests.withServe(extra: ["cabify": "    refresh: 5\n"], arguments: ["--metrics"]) { session, served in
            try await Self.refreshed(served, sources: 2)
            let urls = ["/feed.jsonl?source=cabify", "/feed.jsonl?source=target", "/feed.jsonl"].map { served.base + $0 }
            var tags: [String] = []
            for url in urls { tags.append(try await ServeTests.get(url).headers.first(name: "etag") ?? "") }
            for url in urls { _ = try await ServeTests.get(url) }
            session.server.control.edit("cabify", .add(list: "products", item: ["code": "HOODIE", "name": "Cabify Hoodie", "price": 30]))
            var cabify = try await ServeTests.get(urls[0])
            for _ in 0..<150 where !cabify.body.contains("HOODIE") {
                try await Task.sleep(for: .milliseconds(100))
                cabify = try await ServeTests.get(urls[0])
            }
            #expect(cabify.body.contains("cabify:HOODIE"))
            let target = try await ServeTests.get(urls[1])
            let merged = try await ServeTests.get(urls[2])
            #expect(cabify.headers.first(name: "etag") != tags[0])
            #expect(target.headers.first(name: "etag") == tags[1])
            #expect(merged.headers.first(name: "etag") != tags[2] && merged.body.contains("cabify:HOODIE"))
            // Three renderings at first, then the cabify feed's and the merged feed's again.
            let metrics = try await ServeTests.get(served.base + "/metrics").body
            #expect(metrics.split(separator: "\n").contains(#"aggregate_response_cache_total{result="miss"} 5"#), "\(metrics)")
        }
    }

    /// A refresh that fails keeps the copy in service, and says so in the header and on
    /// `/healthz` with the error and the next try.
    @Test func aFailingRefreshKeepsServingTheCopyAndSaysSo() async throws {
        try await ServeTests.withServe(sources: FixtureWorld.only("cabify"), extra: ["cabify": "    refresh: 5\n    retries: 1\n"]) { session, served in
            try await Self.refreshed(served, sources: 1)
            let good = try await ServeTests.get(served.base + "/feed.jsonl")
            session.server.control.set("cabify", [Fault(status: 500)])
            var answer = good
            for _ in 0..<100 where answer.headers.first(name: "x-aggregate-degraded") == nil {
                try await Task.sleep(for: .milliseconds(100))
                answer = try await ServeTests.get(served.base + "/feed.jsonl")
            }
            #expect(answer.status == 200)
            #expect(answer.headers.first(name: "x-aggregate-degraded") == "cabify=cache")
            #expect(answer.body == good.body)
            let health = try await ServeTests.get(served.base + "/healthz").body
            #expect(health.contains(#""status":"degraded""#))
            #expect(health.contains(#""last_error":"HTTP 500 (no retries configured) (\#(session.base.absoluteString)/cabify/Products.json)""#), "\(health)")
            #expect(health.contains(#""next_refresh":"#))
        }
    }

    /// Two replicas on one PostgreSQL state: each source is refreshed by one of them at a
    /// time (a lease in the store), and both answer the same bytes and ETag.
    @Test(.enabled(if: StateKind.all.contains(.postgres), "needs PostgreSQL (Tools/test-postgres.sh)"))
    func twoReplicasOnOneStateRefreshEachSourceOnce() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), extra: ["cabify": "    refresh: 5\n"],
                                           state: .postgres) { session in
            let first = try await ServeTests.Served.start(session)
            try await Self.refreshed(first, sources: 1)
            let second = try await ServeTests.Served.start(session)
            try await Self.refreshed(second, sources: 1)
            let started = session.server.control.requests(to: "cabify").count
            try await Task.sleep(for: .seconds(10))
            // In 10 s each replica refreshes twice or three times; one of them holds the lease.
            let refreshes = session.server.control.requests(to: "cabify").count - started
            #expect((1...3).contains(refreshes), "\(refreshes) upstream requests in 10 s")
            let a = try await ServeTests.get(first.base + "/feed.atom", headers: [("Accept-Encoding", "gzip"), ("Host", "feeds.example")])
            let b = try await ServeTests.get(second.base + "/feed.atom", headers: [("Accept-Encoding", "gzip"), ("Host", "feeds.example")])
            #expect(a.status == 200 && b.status == 200)
            #expect(a.headers.first(name: "etag") == b.headers.first(name: "etag"))
            await first.stop()
            await second.stop()
        }
    }
}
