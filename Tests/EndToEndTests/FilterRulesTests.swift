import FeedCore
import FeedSourceTesting
import Foundation
import FixtureServer
import Testing

/// `filters:` (issue 30) with the built binary: the same cards kept and dropped on the
/// command line, in `serve` and in a digest; a page still full when rules drop cards.
@Suite(.serialized) struct FilterRulesTests {
    /// Every source loses its TV stands; Target keeps what is under $200.
    static let preamble = """
        filters:
          drop:
            - {field: title, match: "(?i)stand"}

        """
    static let targetExtra = """
            filters:
              keep:
                - {price: {below: 200}}

        """
    /// What passes both: the Target deals under $200 that are not stands.
    static let keptTargetIDs = ["target:1", "target:3", "target:9", "target:11"]

    @Test func theCommandLineKeepsExactlyWhatTheRulesSayAndCountsWhatEachDropped() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("target"), extra: ["target": Self.targetExtra],
                                           preamble: Self.preamble) { session in
            let run = try await session.run("--all", "--format", "jsonl", "--verbose")
            #expect(run.status == 0)
            #expect(run.stdoutLines.compactMap { Self.id(of: $0) } == Self.keptTargetIDs)
            #expect(run.stderrLines.filter { $0.contains("rule") } == [
                #"target: 2 cards dropped by drop rule {field: title, match: "(?i)stand"} (Sources.yml:3:7)"#,
                "target: 14 cards matched no keep rule (Sources.yml:11:11)",
            ])
            // Every output format goes through the same pipeline.
            let csv = try await session.run("--all", "--format", "csv")
            #expect(csv.stdout.split(separator: "\r\n").dropFirst().map { $0.prefix { $0 != "," } } == Self.keptTargetIDs.map { $0[...] })
            // The rules shape the feed, not what one id is: `show` still finds a dropped card.
            #expect(try await session.run("show", "target:10").status == 0)

            let sources = try await session.run("sources", "--format", "jsonl")
            #expect(sources.stdoutLines.count == 1)
            let listing = try JSONSerialization.jsonObject(with: Data(sources.stdout.utf8)) as? [String: Any]
            #expect(listing?["filters"] as? [String] == [
                "keep {price: {below: 200}}", #"drop {field: title, match: "(?i)stand"} (every source)"#,
            ])
        }
    }

    @Test func serveAndDigestsApplyTheSameRules() async throws {
        try await ServeTests.withServe(sources: FixtureWorld.only("target"), extra: ["target": Self.targetExtra],
                                       preamble: Self.preamble) { session, served in
            let feed = try await ServeTests.get("\(served.base)/feed.jsonl?per_page=100")
            #expect(feed.status == 200)
            #expect(feed.body.split(separator: "\n").compactMap { Self.id(of: String($0)) } == Self.keptTargetIDs)

            let digest = try await session.run("digest", "--name", "deals", "--first-run", "report", "--format", "jsonl")
            #expect(digest.status == 0)
            #expect(digest.stdoutLines.compactMap { Self.id(of: $0) } == Self.keptTargetIDs)
        }
    }

    @Test func aPageStaysFullWhenRulesDropCards() async throws {
        let preamble = """
            filters:
              drop:
                - {field: id, match: "^users:[1-3]$"}

            """
        try await FixtureWorld.withSession(sources: FixtureWorld.only("users"), preamble: preamble) { session in
            let run = try await session.run("--per-page", "5", "--format", "jsonl")
            #expect(run.status == 0)
            #expect(run.stdoutLines.compactMap { Self.id(of: $0) } == ["users:4", "users:5", "users:6", "users:7", "users:8"])
            // Page 1 upstream gave three cards after the rule; the second was read to fill the page.
            #expect(session.requests.map { $0.query ?? "" } == ["page=1", "page=2"])
        }
    }

    @Test func everyBadRuleIsOneConfigErrorWithItsPlace() async throws {
        let preamble = """
            filters:
              drop:
                - {field: headline, match: "x"}
                - {field: title, match: "(a+)+$"}
                - {published: {newer_than: 14 days}}

            """
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), preamble: preamble) { session in
            let run = try await session.run("validate")
            #expect(run.status == 2)
            #expect(run.stderrLines == [
                #"Sources.yml:3:15: filters.drop[0].field: must be one of title, summary, url, author, tags, kind, id, got "headline""#,
                #"Sources.yml:4:29: filters.drop[1].match: "(a+)+$" repeats a group that itself repeats (like (a+)+), which can take forever on some text; write it without the nesting"#,
                #"Sources.yml:5:32: filters.drop[2].published.newer_than: expected a duration such as 90m, 12h, 14d or 2w, got "14 days""#,
            ])
        }
    }

    static func id(of line: String) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
    }

    /// A rule that backtracks without end on an ordinary title (issue 39, item 2): one
    /// 120-character title made every route of serve time out, `/healthz` included, and
    /// SIGTERM was ignored. Now the feed is served, the rule is named and counted, health
    /// answers meanwhile, and serve stops at once.
    @Test func aRunawayRuleCannotStallServe() async throws {
        let preamble = """
            filters:
              drop:
                - {field: title, match: "(.|\\\\s)*sponsored"}

            """
        let title = Array(repeating: "mug", count: 30).joined(separator: " ")
        try await ServeTests.withServe(sources: FixtureWorld.only("cabify"), preamble: preamble,
                                       arguments: ["--metrics", "--no-background-refresh"]) { session, served in
            session.server.control.edit("cabify", .set(list: "products", key: "code", match: "MUG", field: "name", value: .string(title)))
            let cli = try await session.run()
            #expect(cli.status == 0)
            #expect(cli.stderrLines == [#"cabify: rule {field: title, match: "(.|\\s)*sponsored"} (Sources.yml:3:7) ran out of time (50 ms) on 1 card and counted as no match"#])
            async let feed = ServeTests.get(served.base + "/feed.atom")
            let health = try await ServeTests.get(served.base + "/healthz")
            #expect(health.status == 200 || health.status == 503)
            let answer = try await feed
            #expect(answer.status == 200)
            #expect(answer.body.contains(title))
            let metrics = try await ServeTests.get(served.base + "/metrics")
            #expect(metrics.body.contains(#"aggregate_filter_rule_timeouts_total{rule="Sources.yml:3:7"} 1"#), "\(metrics.body)")
            #expect(served.log.contains(#"cabify: rule {field: title, match: "(.|\\s)*sponsored"} (Sources.yml:3:7) ran out of time (50 ms) on 1 card"#), "\(served.log)")
            let clock = ContinuousClock()
            let start = clock.now
            await served.stop()
            #expect(clock.now - start < .seconds(10))
        }
    }
}
