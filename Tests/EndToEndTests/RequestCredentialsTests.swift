import FeedCore
import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// Where a source's credentials go, and how a URL that carries some is printed
/// (issue 28, defect 13).
@Suite(.serialized) struct RequestCredentialsTests {
    /// The `deals-page` json source with a key header, its detail endpoint on `detailBase`.
    static func dealsYAML(base: URL, detailBase: String) throws -> String {
        let entry = try #require(FixtureWorld.only("deals-page").first)
        return "sources:\n" + entry.yaml(base: base)
            .replacingOccurrences(of: "    enabled: false\n", with: "    headers:\n      x-api-key: list-key\n")
            .replacingOccurrences(of: "\(base.absoluteString)/json-api/products/", with: "\(detailBase)/json-api/products/")
    }

    /// A detail URL on another host gets none of the source's headers; one on the same
    /// origin does.
    @Test func configuredHeadersGoToTheSourcesOriginOnly() async throws {
        try await FixtureWorld.withSession(sources: []) { session in
            let port = try #require(session.base.port)
            try session.workspace.write("Sources.yml", try Self.dealsYAML(base: session.base, detailBase: "http://localhost:\(port)"))
            let shown = try await session.run("show", "deals-page:3", "--format", "jsonl")
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(session.requests.map(\.path) == ["/json-api/products/3"])
            #expect(session.requests.first?.headers["x-api-key"] == nil)

            session.clearLog()
            try session.workspace.write("Sources.yml", try Self.dealsYAML(base: session.base, detailBase: session.base.absoluteString))
            #expect(try await session.run("show", "deals-page:4").status == 0)
            #expect(session.requests.first?.headers["x-api-key"] == "list-key")
        }
    }

    /// `user:password@` in a URL is sent as Basic authorization, to that origin only.
    @Test func userInfoIsSentAsBasicAuthorization() async throws {
        try await FixtureWorld.withSession(sources: []) { session in
            let base = session.base.absoluteString.replacingOccurrences(of: "http://", with: "http://reader:op%40en@")
            try session.workspace.write("Sources.yml", """
                sources:
                  - id: shop
                    plugin: cabify
                    url: \(base)/cabify/Products.json

                """)
            let run = try await session.run("--format", "jsonl")
            #expect(run.status == 0)
            #expect(run.stdoutLines.count == 3)
            #expect(session.requests.first?.headers["authorization"] == "Basic " + Data("reader:op@en".utf8).base64EncodedString())
        }
    }

    /// A CR/LF written into a URL is refused at load, and the message that quotes the URL
    /// stays one line.
    @Test func controlCharactersInAURLAreNeverEchoedRaw() async throws {
        let workspace = try Workspace(sourcesYml: """
            sources:
              - id: shop
                plugin: cabify
                url: "http://example.test/a\\r\\nInjected: yes?pwd=hunter2"

            """)
        let run = try await workspace.aggregate("--offline")
        #expect(run.status == 2)
        #expect(run.stderrLines == [
            #"Sources.yml:4:10: sources[0].url: a URL cannot contain spaces or control characters: "http://example.test/a%0D%0AInjected: yes?pwd=REDACTED""#,
        ])
    }
}
