import FeedCore
import FeedSourceTesting
import FixtureKit
import FixtureServer
import Foundation
import Testing

/// `plugin: json` through the real binary and the fixture server's `/json-api/` routes,
/// one source per paging style, all over the 20 recorded Target deals.
@Suite(.serialized) struct JSONAPIEndToEndTests {
    /// The style's entry, enabled.
    static func entry(_ id: String) -> [FixtureSourceEntry] {
        FixtureWorld.enabled(id)
    }

    static func cards(_ run: Binary.Run) throws -> [Card] {
        try run.stdoutLines.map { try JSONDecoder().decode(Card.self, from: Data($0.utf8)) }
    }

    @Test(arguments: [
        ("deals-page", ["/json-api/page?page=1&size=6", "/json-api/page?page=2&size=6", "/json-api/page?page=3&size=6", "/json-api/page?page=4&size=6"]),
        ("deals-offset", ["/json-api/offset?skip=0&limit=6", "/json-api/offset?skip=6&limit=6", "/json-api/offset?skip=12&limit=6", "/json-api/offset?skip=18&limit=6"]),
        ("deals-cursor", ["/json-api/cursor", "/json-api/cursor?after=c-6", "/json-api/cursor?after=c-12", "/json-api/cursor?after=c-18"]),
        ("deals-next-url", ["/json-api/next_url", "/json-api/next_url?page=2", "/json-api/next_url?page=3", "/json-api/next_url?page=4"]),
        ("deals-link", ["/json-api/link_header", "/json-api/link_header?page=2", "/json-api/link_header?page=3", "/json-api/link_header?page=4"]),
    ])
    func everyPagingStyleReadsTheWholeListOnce(id: String, requests: [String]) async throws {
        try await FixtureWorld.withSession(sources: Self.entry(id)) { session in
            let run = try await session.run("--per-page", "50")
            #expect(run.status == 0)
            #expect(run.stderr == "")
            let cards = try Self.cards(run)
            try #require(cards.map(\.id) == (0..<20).map { "\(id):\($0)" })
            #expect(cards[1].price == Price(amount: Decimal(string: "159.99")!, currency: "USD", regular: Decimal(string: "209.99")!))
            #expect(session.requests.map { "\($0.path)\($0.query.map { "?\($0)" } ?? "")" } == requests)
            // Warm: every page from the cache (the Link header too), no request.
            session.clearLog()
            let warm = try await session.run("--per-page", "50")
            #expect(try Self.cards(warm) == cards)
            #expect(session.requests.isEmpty)
        }
    }

    @Test func pageTwoReadsOnlyTheUpstreamPagesItNeeds() async throws {
        try await FixtureWorld.withSession(sources: Self.entry("deals-offset")) { session in
            let run = try await session.run("--per-page", "5", "--page", "2")
            #expect(try Self.cards(run).map(\.id) == (5..<10).map { "deals-offset:\($0)" })
            #expect(session.requests.map { $0.query ?? "" } == ["skip=0&limit=6", "skip=6&limit=6"])
        }
    }

    /// A page holding more records than `max_items` builds only those, and the walk ends
    /// with it: the budget is spent (issue 28, defect 12).
    @Test func aPageBeyondMaxItemsReadsOnlyMaxItemsAndEndsTheWalk() async throws {
        let entries = Self.entry("deals-offset").map { entry in
            var entry = entry
            entry.extraYAML = "    max_items: 4\n" + entry.extraYAML
            return entry
        }
        try await FixtureWorld.withSession(sources: entries) { session in
            let run = try await session.run("--per-page", "50")
            #expect(run.status == 0)
            #expect(try Self.cards(run).map(\.id) == (0..<4).map { "deals-offset:\($0)" })
            #expect(session.requests.map { $0.query ?? "" } == ["skip=0&limit=6"])
        }
    }

    @Test func showReadsTheDetailEndpointWithTheIDEncoded() async throws {
        try await FixtureWorld.withSession(sources: Self.entry("deals-page")) { session in
            let found = try await session.run("show", "deals-page:3", "--format", "jsonl")
            #expect(found.status == 0)
            #expect(try Self.cards(found).map(\.title) == ["VIZIO D-Series 32\" Class 720p Full-Array LED HD Smart TV"])
            #expect(session.requests.map(\.path) == ["/json-api/products/3"])
            session.clearLog()
            let missing = try await session.run("show", "deals-page:a/../9")
            #expect(missing.status == 1)
            #expect(missing.stderrLines == ["deals-page: no item with id a/../9 (\(session.base.absoluteString)/json-api/products/a%2F%2E%2E%2F9 answered 404)"])
            #expect(session.requests.map(\.path) == ["/json-api/products/a%2F%2E%2E%2F9"])
        }
    }

    @Test func aNextURLOnAnotherHostFailsTheSource() async throws {
        let fault = Fault(body: #"{"results": [{"id": 1, "title": "One"}], "next": "https://elsewhere.example/steal"}"#)
        try await FixtureWorld.withSession(sources: Self.entry("deals-next-url"), faults: ["json-api": [fault]]) { session in
            let run = try await session.run("--per-page", "50", "--format", "jsonl")
            #expect(run.status == 1)
            #expect(run.stderrLines.first?.hasPrefix("deals-next-url: the next page is on another host (https://elsewhere.example/steal); only 127.0.0.1 is followed") == true)
        }
    }

    /// The shipped `users-json` entry yields the `reqres` module's cards, but for the id.
    @Test func theShippedUsersJSONEntryGivesTheReqresModulesCards() async throws {
        let shipped = try Workspace.shippedSourcesYml
        let start = try #require(shipped.range(of: "  - id: users-json"))
        let end = shipped[start.upperBound...].range(of: "\n  - id: ")?.lowerBound ?? shipped.endIndex
        let entry = String(shipped[start.lowerBound..<end])
        try await FixtureWorld.withSession(sources: FixtureWorld.only("users")) { session in
            let yaml = try String(contentsOf: session.workspace.url.appendingPathComponent("Sources.yml"), encoding: .utf8)
            let described = entry.replacingOccurrences(of: "https://reqres.in/api/users", with: "\(session.base.absoluteString)/reqres/api/users")
                .replacingOccurrences(of: "    enabled: false\n", with: "")
            try session.workspace.write("Sources.yml", yaml + described + "\n")
            let module = try Self.cards(try await session.run("--source", "users", "--per-page", "50"))
            let json = try Self.cards(try await session.run("--source", "users-json", "--per-page", "50"))
            #expect(module.count == 12)
            #expect(json.map { card in
                var card = card
                card.id = "users:\(card.upstreamID)"
                card.source = "users"
                return card
            } == module)
            let shown = try await session.run("show", "users-json:2", "--format", "jsonl")
            #expect(shown.stdout == #"{"id":"users-json:2","image":"https://reqres.in/img/faces/2-image.jpg","kind":"person","source":"users-json","summary":"janet.weaver@reqres.in","tags":[],"title":"Janet Weaver","v":1}"# + "\n")
        }
    }
}

/// Offline, `users-json` is served the reqres module's recordings of the same URLs.
@Suite struct NoCodeOfflineTests {
    @Test func theShippedUsersJSONEntryWorksOfflineFromReqresRecordings() async throws {
        let workspace = try Workspace(sourcesYml: try Workspace.shippedSourcesYml)
        let described = try await workspace.run("--offline", "--source", "users-json", "--per-page", "50")
        let module = try await workspace.run("--offline", "--source", "users", "--per-page", "50")
        #expect(described.status == 0)
        let cards = try JSONAPIEndToEndTests.cards(described)
        #expect(cards.count == 12)
        #expect(cards.allSatisfy { $0.origin == .snapshot })
        #expect(cards.map(\.title) == (try JSONAPIEndToEndTests.cards(module)).map(\.title))
    }
}

/// `aggregate validate` names every bad option of both no-code plugins at once.
@Suite struct NoCodeValidationTests {
    @Test func validateNamesEveryBadOptionWithItsLineAndColumn() async throws {
        let workspace = try Workspace(sourcesYml: """
            sources:
              - id: shop
                plugin: json
                url: https://shop.example/api
                options:
                  items: products
                  fields: {id: id, title: "{name", price: price}
                  paging: {style: cursor, param: after}
              - id: hn
                plugin: exec
                options: {command: [./missing.sh]}

            """)
        let run = try await workspace.run("validate")
        #expect(run.status == 2)
        #expect(run.stdout == "")
        let folder = workspace.url.standardizedFileURL.path
        #expect(run.stderrLines == [
            "Sources.yml:6:7: sources[0].options.currency: is required with fields.price: the ISO 4217 code of every price (USD, EUR)",
            "Sources.yml:7:31: sources[0].options.fields.title: \"{name\" has a { without its }",
            "Sources.yml:8:15: sources[0].options.paging.from: is required: the path of the next cursor in a page body",
            "Sources.yml:11:24: sources[1].options.command: ./missing.sh is not an executable file (looked at \(folder)/missing.sh; relative paths start at the Sources.yml folder)",
        ])
    }
}
