import FeedConfig
import FeedCore
import FeedSupport
import FeedEngine
import FeedSourceTesting
import Foundation
@testable import Reqres
import Testing

@Suite struct ReqresTests {
    static let base = ReqresSource.upstreamURL

    func source(_ responses: [String: (status: Int, body: Data)]? = nil, options: String? = nil) throws -> ReqresSource {
        var settings = SourceSettings(id: "users", url: URL(string: Self.base)!, environment: [:], json: JSONBody.tape)
        if let options {
            let yaml = "sources:\n  - id: users\n    plugin: reqres\n    url: \(Self.base)\n    options:\n\(options)"
            settings = try ConfigLoader(registry: SourceRegistry([ReqresSource.self]), environment: [:])
                .load(text: yaml, file: "Sources.yml").sources[0].settings
        }
        let notFound = (404, Data("{}".utf8))
        return try ReqresSource(settings: settings, http: responses.map { RecordedUpstream($0, otherwise: notFound) }
            ?? RecordedUpstream(snapshotsOf: ReqresSource.self, otherwise: notFound))
    }

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: try #require(Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: "json")))
    }

    static func person(_ id: Int, _ first: String, _ last: String) -> Card {
        Card(source: "users", upstreamID: "\(id)", kind: .person, title: "\(first) \(last)",
             summary: "\(first.lowercased()).\(last.lowercased())@reqres.in",
             image: URL(string: "https://reqres.in/img/faces/\(id)-image.jpg"))
    }

    @Test func pagesByNumberUntilTotalPages() async throws {
        let source = try source()
        let first = try await source.page(after: nil)
        #expect(first.cards == [
            Self.person(1, "George", "Bluth"), Self.person(2, "Janet", "Weaver"), Self.person(3, "Emma", "Wong"),
            Self.person(4, "Eve", "Holt"), Self.person(5, "Charles", "Morris"), Self.person(6, "Tracey", "Ramos"),
        ])
        #expect(first.next == "2")
        #expect(first.total == 12)
        let second = try await source.page(after: first.next)
        #expect(second.cards.map(\.id) == (7...12).map { "users:\($0)" })
        #expect(second.cards[0] == Self.person(7, "Michael", "Lawson"))
        #expect(second.next == nil)
    }

    @Test func thePrettyPrintedCopyOfPage2MapsTheSame() async throws {
        let pretty = try Self.fixture("users_page2.pretty")
        let page = try await source(["\(Self.base)/api/users?page=2": (200, pretty)]).page(after: "2")
        #expect(page.cards == (try await source().page(after: "2")).cards)
    }

    @Test func perPageIsPassedUpstream() async throws {
        let all = try Self.fixture("users_per_page_22")
        let source = try source(["\(Self.base)/api/users?page=1&per_page=22": (200, all)], options: "      per_page: 22\n")
        let page = try await source.page(after: nil)
        #expect(page.cards.count == 12)
        #expect(page.next == nil)
    }

    @Test func detailAndNotFound() async throws {
        #expect(try await source().detail(id: "2") == Self.person(2, "Janet", "Weaver"))
        await #expect(throws: SourceError.notFound("no user with id 23")) { try await source().detail(id: "23") }
        await #expect(throws: SourceError.notFound("no user with id x")) { try await source().detail(id: "x") }
    }

    @Test func unauthorizedNamesTheKeyVariable() async throws {
        let source = try source(["\(Self.base)/api/users?page=1": (401, Data(#"{"error":"Missing API key"}"#.utf8))])
        await #expect(throws: SourceError.failed("unauthorized (401): set REQRES_API_KEY to a valid reqres.in key")) {
            try await source.page(after: nil)
        }
    }

    @Test func theOldShapeWithAdInsteadOfSupportStillMaps() async throws {
        let body = Data(#"{"page":1,"per_page":3,"total":3,"total_pages":1,"data":[{"id":1,"email":"george.bluth@reqres.in","first_name":"George","last_name":"Bluth","avatar":"https://s3.amazonaws.com/uifaces/faces/twitter/calebogden/128.jpg"}],"ad":{"company":"StatusCode Weekly","url":"http://statuscode.org/","text":"x"}}"#.utf8)
        let page = try await source(["\(Self.base)/api/users?page=1": (200, body)]).page(after: nil)
        #expect(page.cards.map(\.title) == ["George Bluth"])
        #expect(page.cards[0].image == URL(string: "https://s3.amazonaws.com/uifaces/faces/twitter/calebogden/128.jpg"))
    }

    @Test func badOptionsAreConfigErrors() {
        #expect(throws: ConfigIssues.self) { try source(options: "      per_page: 0\n") }
    }
}
