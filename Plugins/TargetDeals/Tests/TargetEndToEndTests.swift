import FeedCore
import Foundation
import FeedSourceTesting
import FixtureServer
import TargetDeals
import Testing

/// `target-deals` through the fixture server's `/target/deals` routes.
@Suite(.serialized) struct TargetEndToEndTests {
    func run(_ arguments: String..., faults: [Fault]? = nil) async throws -> (Binary.Run, [LoggedRequest]) {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("target"), extra: ["target": "    retries: 1\n"],
                                           faults: faults.map { ["target": $0] } ?? [:]) { session in
            (try await session.workspace.run(arguments: arguments), session.requests)
        }
    }

    @Test func theListPrintsTwentyDealsFromOneRequest() async throws {
        let (run, requests) = try await run("--per-page", "50")
        #expect(run.status == 0)
        #expect(run.stderr == "")
        let cards = try run.stdoutLines.map { try JSONDecoder().decode(Card.self, from: Data($0.utf8)) }
        #expect(cards.map(\.id) == (0..<20).map { "target:\($0)" })
        #expect(requests.map(\.path) == ["/target/deals"])
        #expect(requests.first?.headers["user-agent"] == "aggregate/0.1.0")
    }

    @Test func showReadsTheDetailEndpoint() async throws {
        let (run, requests) = try await run("show", "target:1", "--format", "jsonl")
        #expect(run.status == 0)
        #expect(run.stderr == "")
        let card = try JSONDecoder().decode(Card.self, from: Data(run.stdout.utf8))
        #expect(card.summary?.hasPrefix("The 3-Series TCL Roku TV puts all your entertainment favorites") == true)
        #expect(card.price?.regular == Decimal(string: "209.99"))
        #expect(requests.map(\.path) == ["/target/deals/1"])
    }

    @Test func anUnknownDealExits1() async throws {
        let (run, _) = try await run("show", "target:99")
        #expect(run.status == 1)
        #expect(run.stdout == "")
        #expect(run.stderrLines == ["target: no deal with id 99"])
    }

    @Test func aDetailAboutAnotherDealIsAnErrorNotThatCard() async throws {
        let (run, _) = try await run("show", "target:2", "--format", "jsonl", faults: [
            Fault(body: String(decoding: TargetFixtureData.deal1, as: UTF8.self)), .none,
        ])
        #expect(run.status == 3)
        #expect(run.stderrLines.count == 1)
        #expect(run.stderrLines.first?.hasPrefix("target: detail unavailable: asked for deal 2, the upstream answered with deal 1 (") == true)
        let card = try JSONDecoder().decode(Card.self, from: Data(run.stdout.utf8))
        #expect(card.id == "target:2")
        #expect(card.title == "Hisense 50\" Class- A6G Series 4K UHD Android Smart TV")
    }
}

enum TargetFixtureData {
    static let deal1 = TargetDealsSource.snapshots[1].body
}
