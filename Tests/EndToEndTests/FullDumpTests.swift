import FeedCore
import FeedSourceTesting
import FixtureCatalogue
import FixtureServer
import Foundation
import SourceCatalogue
import Testing

/// `--all` (every card, not a page), `max_body` (a per-source body cap) and the fixture
/// server's `--scale` that the benchmark runs on: the first parts of issue 14.
@Suite(.serialized) struct FullDumpTests {
    static func cards(_ run: Binary.Run) throws -> [Card] {
        try run.stdoutLines.map { try JSONDecoder().decode(Card.self, from: Data($0.utf8)) }
    }

    @Test func allPrintsEveryCardInTheChosenOrder() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("target") + FixtureWorld.only("cabify")) { session in
            let run = try await session.run("--all", "--sort", "price", "--format", "jsonl")
            #expect(run.status == 0)
            #expect(run.stderr == "")
            let cards = try Self.cards(run)
            #expect(cards.count == 23)
            let amounts = cards.compactMap { $0.price?.amount }
            #expect(amounts.count == 23)
            #expect(amounts == amounts.sorted())
            let refused = try await session.run("--all", "--page", "2")
            #expect(refused.status == 2)
            #expect(refused.stderrLines.first == "Error: --all prints every card: leave out --page and --per-page")
        }
    }

    @Test func maxBodyRaisesTheCapAndTheErrorNamesIt() async throws {
        let big = [Fault(oversizeBytes: 21 * 1024 * 1024)]
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), faults: ["cabify": big]) { session in
            let capped = try await session.run("--format", "jsonl")
            #expect(capped.status == 1)
            #expect(capped.stderrLines.first?.hasPrefix("cabify: response larger than 20 MiB (raise max_body in Sources.yml to accept it) (") == true)
        }
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), extra: ["cabify": "    max_body: 32MiB\n"],
                                           faults: ["cabify": big]) { session in
            // The fault's body is 21 MiB of filler: accepted whole, then not JSON.
            let raised = try await session.run("--format", "jsonl")
            #expect(raised.stderrLines.first?.hasPrefix("cabify: unreadable response: the body is not JSON (22020096 bytes) (") == true)
        }
    }

    @Test func aBadMaxBodyIsAConfigErrorWithItsPlace() async throws {
        let workspace = try Workspace(sourcesYml: """
            sources:
              - id: shop
                plugin: cabify
                url: https://shop.example/Products.json
                max_body: 64 MB please
              - id: tiny
                plugin: cabify
                url: https://shop.example/Products.json
                max_body: 10B

            """)
        let run = try await workspace.run("validate")
        #expect(run.status == 2)
        #expect(run.stderrLines == [
            "Sources.yml:5:15: sources[0].max_body: expected a size such as 64MiB, 512KiB or 1048576 (bytes), got \"64 MB please\"",
            "Sources.yml:9:15: sources[1].max_body: must be from 1 KiB to 4 GiB, got 10B",
        ])
    }

    @Test func aScaledServerReplicatesEveryListWithDistinctIDsAndPrices() async throws {
        let server = FixtureServer.standard(FixtureCatalogue.sources, scale: 3)
        try await server.withRunning { base in
            let entries = FixtureWorld.sources.filter { ["target", "users", "cabify"].contains($0.id) }
            let workspace = try Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, sources: entries))
            let run = try await workspace.run("--all", "--format", "jsonl")
            #expect(run.status == 0)
            let cards = try Self.cards(run)
            #expect(Dictionary(grouping: cards, by: \.source).mapValues(\.count) == ["target": 60, "users": 36, "cabify": 9])
            #expect(Set(cards.map(\.id)).count == cards.count)
            let first = try #require(cards.first { $0.id == "target:1" }?.price?.amount)
            #expect(cards.first { $0.id == "target:1000001" }?.price?.amount == first + Decimal(string: "0.01")!)
            #expect(cards.first { $0.id == "target:2000001" }?.price?.amount == first + Decimal(string: "0.02")!)
        }
    }

    /// `aggregate --all | head`: once the reader has gone, the output stops without a word
    /// and the command exits 141, as a tool stopped by SIGPIPE; the cache is still written.
    @Test func aReaderThatGoesAwayEndsTheOutputQuietly() async throws {
        let server = FixtureServer.standard(FixtureCatalogue.sources, scale: 20)
        try await server.withRunning { base in
            let entries = FixtureWorld.sources.filter { ["target", "users", "dishwashers", "cabify"].contains($0.id) }
            let workspace = try Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, sources: entries))
            let shell = try await TestProcess.run(
                URL(fileURLWithPath: "/bin/bash"),
                ["-c", #"set -o pipefail; "$0" --all --format jsonl --state-dir state 2> stderr.txt | head -c 100 > /dev/null; echo $?"#,
                 Binary.aggregate.url.path],
                in: workspace.url)
            #expect(shell.stdout == "141\n")
            let stderr = try String(contentsOf: workspace.url.appendingPathComponent("stderr.txt"), encoding: .utf8)
            #expect(stderr == "", "\(stderr)")
            #expect(try await workspace.cacheSQL("SELECT count(DISTINCT url) >= 4 FROM http_cache") == "1\n")
        }
    }
}
