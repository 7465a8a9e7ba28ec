import FeedCore
import FixtureKit
import Foundation
import FeedSourceTesting
import FixtureServer
import Testing

/// `reqres` through the fixture server's `/reqres/api/users` routes.
@Suite(.serialized) struct ReqresEndToEndTests {
    struct Outcome {
        var run: Binary.Run
        var requests: [LoggedRequest]
    }

    func run(_ arguments: [String], environment: [String: String] = [:], faults: [Fault]? = nil,
             requireKey: String? = nil) async throws -> Outcome {
        try await FixtureWorld.withSession(
            sources: FixtureWorld.only("users"), faults: faults.map { ["reqres": $0] } ?? [:],
            options: FixtureOptions(requiredKeys: requireKey.map { ["reqres": $0] } ?? [:])
        ) { session in
            let run = try await session.workspace.run(arguments: arguments, environment: environment)
            return Outcome(run: run, requests: session.requests)
        }
    }

    @Test func pageOneNeedsBothUpstreamPages() async throws {
        let outcome = try await run(["--source", "users", "--page", "1"])
        #expect(outcome.run.status == 0)
        #expect(outcome.run.stderr == "")
        let cards = try outcome.run.stdoutLines.map { try JSONDecoder().decode(Card.self, from: Data($0.utf8)) }
        #expect(cards.map(\.id) == (1...12).map { "users:\($0)" })
        #expect(cards[1].title == "Janet Weaver")
        #expect(outcome.requests.map { "\($0.path)?\($0.query ?? "")" } == ["/reqres/api/users?page=1", "/reqres/api/users?page=2"])
    }

    @Test func pageTwoIsPastTheEnd() async throws {
        let outcome = try await run(["--source", "users", "--page", "2"])
        #expect(outcome.run.status == 0)
        #expect(outcome.run.stdout == "")
        #expect(outcome.run.stderrLines == ["aggregate: page 2 is past the end: there is 1 page (12 cards at 20 per page)"])
    }

    @Test func smallPagesReadOneUpstreamPageAtATime() async throws {
        let outcome = try await run(["--per-page", "5", "--page", "1"])
        #expect(outcome.run.stdoutLines.count == 5)
        #expect(outcome.requests.count == 1)
    }

    @Test func showAUserAndAMissingOne() async throws {
        let found = try await run(["show", "users:2", "--format", "jsonl"])
        #expect(found.run.status == 0)
        #expect(found.run.stdout == #"{"id":"users:2","image":"https://reqres.in/img/faces/2-image.jpg","kind":"person","source":"users","summary":"janet.weaver@reqres.in","tags":[],"title":"Janet Weaver","v":1}"# + "\n")
        #expect(found.requests.map(\.path) == ["/reqres/api/users/2"])
        let missing = try await run(["show", "users:23"])
        #expect(missing.run.status == 1)
        #expect(missing.run.stderrLines == ["users: no user with id 23"])
    }

    @Test func theDefaultFreeKeyIsSent() async throws {
        let outcome = try await run(["--source", "users"], requireKey: "reqres-free-v1")
        #expect(outcome.run.status == 0)
        #expect(outcome.requests.allSatisfy { $0.headers["x-api-key"] == "reqres-free-v1" })
    }

    @Test func aRejectedKeyFailsTheSourceAndIsNeverPrinted() async throws {
        let secret = "sk-never-print-7f3a9c"
        for arguments in [["--source", "users"], ["--source", "users", "--verbose"], ["sources"], ["sources", "--format", "text"]] {
            let outcome = try await run(arguments, environment: ["REQRES_API_KEY": secret], requireKey: "reqres-free-v1")
            #expect(!(outcome.run.stdout + outcome.run.stderr).contains(secret))
            if arguments.first == "--source" {
                #expect(outcome.run.status == 1)
                #expect(outcome.run.stderrLines.first?.hasPrefix(
                    "users: unauthorized (401): set REQRES_API_KEY to a valid reqres.in key (http://127.0.0.1:") == true)
                #expect(outcome.requests.first?.headers["x-api-key"] == secret)
            }
        }
    }

    @Test func a429GoesThroughTheRetryLayer() async throws {
        let outcome = try await run(["--source", "users"], faults: [Fault(status: 429, retryAfter: "1"), .none])
        #expect(outcome.run.status == 0)
        #expect(outcome.run.stdoutLines.count == 12)
        #expect(outcome.requests.map(\.status) == [429, 200, 200])
    }
}
