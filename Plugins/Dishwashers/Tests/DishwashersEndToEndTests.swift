import FeedCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FeedSourceTesting
import FixtureServer
import Testing

/// `dishwashers` through the fixture server's static files and images.
@Suite(.serialized) struct DishwashersEndToEndTests {
    func run(_ arguments: String...) async throws -> (Binary.Run, [LoggedRequest]) {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("dishwashers")) { session in
            (try await session.workspace.run(arguments: arguments), session.requests)
        }
    }

    @Test func theProductPageIsShownForItsOwnProduct() async throws {
        let (run, requests) = try await run("show", "dishwashers:3294410", "--format", "jsonl")
        #expect(run.status == 0)
        #expect(run.stderr == "")
        let card = try JSONDecoder().decode(Card.self, from: Data(run.stdout.utf8))
        #expect(card.details["specs"].map { if case .array(let specs) = $0 { specs.count } else { 0 } } == 31)
        #expect(card.image?.path == "/dishwasher/images/237048107.jpeg")
        #expect(requests.map(\.path) == ["/dishwasher/api/product-search-response.json"])
    }

    @Test func anotherProductShowsItsGridCardAndSaysWhy() async throws {
        let (run, _) = try await run("show", "dishwashers:1391191", "--format", "jsonl")
        #expect(run.status == 0)
        #expect(run.stderrLines == ["dishwashers: the upstream has no product page for 1391191 (it answers with product 3294410); showing the card from the list"])
        let card = try JSONDecoder().decode(Card.self, from: Data(run.stdout.utf8))
        #expect(card.id == "dishwashers:1391191")
        #expect(card.title == "Indesit DIF 04B1 Ecotime Fully Integrated Dishwasher, White")
        #expect(card.details["productInformation"] == nil)
    }

    @Test func imagesAreServedExceptTheOnesMissingUpstream() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("dishwashers")) { session in
            let run = try await session.run("--per-page", "100")
            let cards = try run.stdoutLines.map { try JSONDecoder().decode(Card.self, from: Data($0.utf8)) }
            var statuses: [String: Int] = [:]
            for card in cards {
                let url = try #require(card.image)
                let (_, response) = try await URLSession.shared.data(from: url)
                statuses[url.lastPathComponent] = (response as? HTTPURLResponse)?.statusCode
            }
            #expect(statuses.count == 20)
            #expect(Set(statuses.filter { $0.value == 404 }.keys) == [
                "236970690.jpeg", "237756457.jpeg", "237563805.jpeg", "236920214.jpeg", "237110664.jpeg", "236888507.jpeg",
            ])
            #expect(statuses.values.allSatisfy { $0 == 200 || $0 == 404 })
        }
    }
}
