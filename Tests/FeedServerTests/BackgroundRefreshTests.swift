import FeedConfig
import FeedCore
import FeedSupport
import FeedEngine
import FeedSourceTesting
import FeedState
import FixtureServer
import Foundation
import HTTPTypes
import SourceCatalogue
import Testing

/// `serve`'s background refresh, in process, on a clock the test moves (issue 40): a
/// refresh happens when the test says so and is known to be done when every refresh loop
/// waits again, so no test sleeps or accepts a range of counts. (Readers answered while an
/// upstream holds a refresh, and `serve` as a process, stay in EndToEndTests.)
@Suite struct BackgroundRefreshTests {
    static let hoodie: JSONValue = ["code": "HOODIE", "name": "Cabify Hoodie", "price": 30]

    /// A source whose data changes retires exactly the responses built from it: the feed
    /// of that source and the merged feed render again; another source's feed stays kept,
    /// with its ETag.
    @Test func aChangedSourceRetiresExactlyTheResponsesBuiltFromIt() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify", "target"), extra: ["cabify": "    refresh: 5\n"],
                                       metrics: true) { served in
            await served.clock.untilSleeping(2)
            let paths = ["/feed.jsonl?source=cabify", "/feed.jsonl?source=target", "/feed.jsonl"]
            var tags: [String?] = []
            for path in paths { tags.append(try await served.get(path).header("etag")) }
            for path in paths { _ = try await served.get(path) }
            served.fixture.control.edit("cabify", .add(list: "products", item: Self.hoodie))
            // Not yet refreshed: the kept response, unchanged.
            #expect(try await served.get(paths[0]).header("etag") == tags[0])
            await served.refresh(after: 5, sources: 2)
            let cabify = try await served.get(paths[0])
            let target = try await served.get(paths[1])
            let merged = try await served.get(paths[2])
            #expect(cabify.text.contains("cabify:HOODIE"))
            #expect(cabify.header("etag") != tags[0])
            #expect(target.header("etag") == tags[1])
            #expect(merged.header("etag") != tags[2] && merged.text.contains("cabify:HOODIE"))
            // Three renderings at first, then the cabify feed's and the merged feed's again.
            let metrics = try await served.get("/metrics").text
            #expect(metrics.split(separator: "\n").contains(#"aggregate_response_cache_total{result="miss"} 5"#), "\(metrics)")
        }
    }

    /// A refresh that fails keeps the copy in service, and says so in the header and on
    /// `/healthz` with the error and the next try.
    @Test func aFailingRefreshKeepsServingTheCopyAndSaysSo() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), extra: ["cabify": "    refresh: 5\n    retries: 1\n"]) { served in
            await served.clock.untilSleeping(1)
            let good = try await served.get("/feed.jsonl")
            #expect(good.header("x-aggregate-degraded") == nil)
            served.fixture.control.set("cabify", [Fault(status: 500)])
            await served.refresh(after: 5, sources: 1)
            let answer = try await served.get("/feed.jsonl")
            #expect(answer.status == .ok)
            #expect(answer.header("x-aggregate-degraded") == "cabify=cache")
            #expect(answer.text == good.text)
            let health = try await served.get("/healthz").text
            #expect(health.contains(#""status":"degraded""#))
            #expect(health.contains(#""last_error":"HTTP 500 (no retries configured) (\#(served.base.absoluteString)/cabify/Products.json)""#), "\(health)")
            #expect(health.contains(#""next_refresh":"#))
            // Two refreshes: the first, and the one that failed.
            #expect(served.upstreamRequests("cabify") == 2)
        }
    }

    /// Sources that fail together are tried again apart: each after 5–10 s, drawn, not all
    /// at the same second (500 sources of a host that was down came back in waves).
    @Test func sourcesFailingTogetherAreTriedAgainApart() async throws {
        let extra = ["cabify": "    refresh: 5\n    retries: 1\n", "target": "    refresh: 5\n    retries: 1\n"]
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify", "target"), extra: extra) { served in
            await served.clock.untilSleeping(2)
            served.fixture.control.set("cabify", [Fault(status: 500)])
            served.fixture.control.set("target", [Fault(status: 500)])
            await served.refresh(after: 5, sources: 2)
            #expect(served.upstreamRequests("cabify") == 2)
            #expect(served.upstreamRequests("target") == 2)
            let waits = served.clock.sleepsLeft
            #expect(waits.count == 2)
            #expect(waits.allSatisfy { $0 >= .seconds(5) && $0 <= .seconds(10) }, "\(waits)")
            #expect(Set(waits).count == 2, "\(waits)")
        }
    }

    struct Answer: Sendable {
        var status: HTTPTypes.HTTPResponse.Status
        var etag: String?
        var encoding: String?
    }

    /// Fifty readers of a cold feed: rendered once, the rest are answered the same bytes;
    /// `/metrics` counts it, labelled by the router's paths.
    @Test func fiftyReadersOfAColdFeedRenderItOnce() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify", "target"), metrics: true) { served in
            await served.clock.untilSleeping(2)
            let upstream = served.fixture.control.requests.count
            let gzip: HTTPFields = [.acceptEncoding: "gzip"]
            let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let answer = try await served.get("/feed.atom?per_page=7", headers: gzip)
                        return Answer(status: answer.status, etag: answer.header("etag"), encoding: answer.header("content-encoding"))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == 50)
            #expect(answers.allSatisfy { $0.status == .ok && $0.encoding == "gzip" })
            #expect(Set(answers.map(\.etag)).count == 1)
            // Readers asked no upstream: the background refresh had filled the cache.
            #expect(served.fixture.control.requests.count == upstream)
            for _ in 0..<10 { _ = try await served.get("/feed.atom?per_page=7", headers: gzip) }
            #expect(served.fixture.control.requests.count == upstream)
            #expect(try await served.get("/cards/cabify:NO-SUCH-PRODUCT").status == .notFound)
            #expect(try await served.get("/no/such/route").status == .notFound)
            let metrics = try await served.get("/metrics")
            #expect(Self.parsesAsPrometheusText(metrics.text))
            #expect(metrics.header("content-type")?.hasPrefix("text/plain; version=0.0.4") == true)
            let lines = metrics.text.split(separator: "\n").map(String.init)
            #expect(lines.contains(#"aggregate_response_cache_total{result="miss"} 1"#))
            #expect(lines.contains(#"aggregate_response_cache_total{result="hit"} 59"#))
            #expect(lines.contains(#"aggregate_http_requests_total{route="/feed.atom",status="200"} 60"#))
            #expect(lines.contains(#"aggregate_http_requests_total{route="/cards/{id}",status="404"} 1"#))
            #expect(lines.contains(#"aggregate_http_requests_total{route="NotFound",status="404"} 1"#))
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

    /// Two replicas on one PostgreSQL state: each refresh round, one of them (the lease
    /// holder) asks the upstream, once; both answer the same bytes and ETag.
    @Test(.enabled(if: PostgresTestServer.isAvailable, "needs PostgreSQL (Tools/test-postgres.sh)"))
    func twoReplicasOnOneStateRefreshEachSourceOnce() async throws {
        let database = try await PostgresTestServer.createDatabase()
        defer { PostgresTestServer.dropDatabaseLater(database) }
        let fixture = FixtureWorld.server()
        try await fixture.withRunning { base in
            // The lease lasts a refresh interval of real time: five minutes, so that however
            // slowly a loaded machine runs the test, the first replica keeps it throughout.
            let yaml = FixtureWorld.sourcesYml(base: base, sources: FixtureWorld.only("cabify"), extra: ["cabify": "    refresh: 300\n"])
            let config = try ConfigLoader(registry: SourceRegistry(SourceCatalogue.sources), environment: [:]).load(text: yaml, file: "Sources.yml")
            let location = try StateLocation(parsing: database)
            let first = try await EngineState.open(location, connections: .pool)
            let second = try await EngineState.open(location, connections: .pool)
            try await ServedInProcess.serve(config: config, state: first, fixture: fixture, base: base) { a in
                await a.clock.untilSleeping(1)
                try await ServedInProcess.serve(config: config, state: second, fixture: fixture, base: base) { b in
                    await b.clock.untilSleeping(1)
                    // The first replica fetched; the second read what it recorded.
                    #expect(a.upstreamRequests("cabify") == 1)
                    for round in 1...2 {
                        await a.refresh(after: 300, sources: 1)
                        await b.refresh(after: 300, sources: 1)
                        #expect(a.upstreamRequests("cabify") == 1 + round)
                    }
                    // One name for both, as behind a load balancer: the feed's links are built from it.
                    var headers: HTTPFields = [.acceptEncoding: "gzip"]
                    headers[try #require(HTTPField.Name("Host"))] = "feeds.example"
                    let one = try await a.get("/feed.atom", headers: headers)
                    let other = try await b.get("/feed.atom", headers: headers)
                    #expect(one.status == .ok && other.status == .ok)
                    #expect(one.header("etag") == other.header("etag"))
                    #expect(one.body == other.body)
                }
            }
            await first.close()
            await second.close()
        }
    }
}
