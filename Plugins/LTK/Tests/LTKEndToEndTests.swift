import FeedCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FeedSourceTesting
import FixtureServer
import Testing

/// `ltk` through the fixture server's cursor-paged feed: request counts from its log.
@Suite(.serialized) struct LTKEndToEndTests {
    /// Runs each argument list in turn against one server and one state directory.
    func runs(_ argumentLists: [[String]], yaml extra: String = "", faults: [Fault]? = nil) async throws
        -> (runs: [Binary.Run], requests: [[LoggedRequest]])
    {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("ltk"), extra: ["ltk": extra],
                                           faults: faults.map { ["ltk": $0] } ?? [:]) { session in
            var runs: [Binary.Run] = []
            var requests: [[LoggedRequest]] = []
            for arguments in argumentLists {
                session.clearLog()
                runs.append(try await session.workspace.run(arguments: arguments))
                requests.append(session.requests)
            }
            return (runs, requests)
        }
    }

    func cards(_ run: Binary.Run) throws -> [Card] {
        try run.stdoutLines.map { try JSONDecoder().decode(Card.self, from: Data($0.utf8)) }
    }

    @Test func pageTwoSendsExactlyTwoRequests() async throws {
        let (runs, requests) = try await runs([["--source", "ltk", "--page", "2"]])
        #expect(runs[0].status == 0)
        #expect(runs[0].stderr == "")
        #expect(try cards(runs[0]).count == 20)
        #expect(requests[0].count == 2)
        #expect(requests[0][1].query?.contains("last_id=") == true)
    }

    @Test func fiftyPerPageSendsThreeAndTheWholeFeedFour() async throws {
        let (runs, requests) = try await runs([["--per-page", "50"], ["--per-page", "1000", "--refresh"]])
        #expect(try cards(runs[0]).count == 50)
        #expect(requests[0].count == 3)
        #expect(try cards(runs[1]).count == 72)
        #expect(requests[1].count == 4)
        #expect(requests[1].last?.query?.contains("limit=20") == true)
    }

    @Test func thePageAfterReadsCachedPagesAndAsksOnlyForTheNewOne() async throws {
        let (runs, requests) = try await runs([["--page", "2"], ["--page", "3"]])
        #expect(requests.map(\.count) == [2, 1])
        let second = try cards(runs[1])
        #expect(second.count == 20)
        #expect(Set(second.map(\.id)).isDisjoint(with: try cards(runs[0]).map(\.id)))
    }

    @Test func maxPagesEndsTheWalk() async throws {
        let (runs, requests) = try await runs([["--per-page", "1000", "--verbose"]], yaml: "    max_pages: 2\n")
        #expect(runs[0].status == 0)
        #expect(try cards(runs[0]).count == 40)
        #expect(requests[0].count == 2)
        #expect(runs[0].stderrLines.contains("ltk: stopped after 2 pages (max_pages: 2)"))
        #expect(runs[0].stderrLines.contains { $0.hasSuffix("is not in profiles; no author") })
        #expect(runs[0].stderrLines.contains { $0.hasSuffix("1 of 5 products not in products; left out") })
        #expect(runs[0].stderrLines.last == "ltk: 40 cards from 2 pages (the upstream has 72)")
    }

    @Test func aCursorSeenTwiceIsAnErrorNamingIt() async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, sources: FixtureWorld.only("ltk")))
            let first = try await URLSession.shared.data(from: URL(string: "\(base.absoluteString)/ltk/api/ltk/v2/ltks/?featured=true&limit=20")!).0
            let next = try #require(try JSONDecoder().decode(JSONValue.self, from: first)["meta"]?["next_url"]?.stringValue)
            // The second page answers with the first page again: its next_url repeats.
            server.control.set("ltk", [.none, Fault(body: String(decoding: first, as: UTF8.self))])
            let run = try await workspace.run("--per-page", "1000")
            #expect(run.status == 3)
            #expect(run.stderrLines == ["ltk: the upstream returned cursor \"\(next)\" twice; stopped to avoid an endless loop"])
            #expect(try cards(run).count == 20)
        }
    }

    @Test func showWalksThePagesThenTheCache() async throws {
        let id = "ltk:c7145075-b8cb-11ec-a191-0242ac110004"
        let (runs, requests) = try await runs([
            ["show", id, "--format", "jsonl"], ["show", id, "--format", "jsonl"], ["show", "ltk:nope"],
        ])
        #expect(runs[0].status == 0)
        #expect(try cards(runs[0]).map(\.id) == [id])
        #expect(requests[0].count == 3)
        #expect(runs[1].stdout == runs[0].stdout)
        #expect(requests[1].isEmpty)
        #expect(runs[2].status == 1)
        #expect(runs[2].stderrLines == ["ltk: no item \"nope\""])
        #expect(requests[2].count == 1, "pages 1-3 cached; only page 4 is new")
    }

    @Test func showSaysHowFarItLookedWhenTheBudgetEnds() async throws {
        let (runs, _) = try await runs([["show", "ltk:nope"]], yaml: "    max_pages: 2\n")
        #expect(runs[0].status == 1)
        #expect(runs[0].stderrLines == ["ltk: no item \"nope\" in the first 2 pages (40 cards); raise max_pages or max_items to look further"])
    }
}
