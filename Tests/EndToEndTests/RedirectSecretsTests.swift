import FeedCore
import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// Configured headers go to the source's own origin only (issue 15, defect 4).
@Suite(.serialized) struct RedirectSecretsTests {
    static let keyed = "    headers:\n      x-api-key: s3cret-key\n      Authorization: Bearer s3cret-token\n"

    @Test func aRedirectToAnotherHostGetsNoConfiguredHeaders() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), extra: ["cabify": Self.keyed]) { session in
            let elsewhere = session.base.absoluteString.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/shop-a/Products.json"
            session.server.control.set("cabify", [Fault(redirectTo: elsewhere)])
            let run = try await session.run()
            #expect(run.status == 0)
            #expect(run.stdoutLines.count == 3)
            let first = try #require(session.server.control.requests(to: "cabify").first)
            let second = try #require(session.server.control.requests(to: "shop-a").first)
            #expect(first.headers["x-api-key"] == "s3cret-key")
            #expect(second.headers["x-api-key"] == nil)
            #expect(second.headers["authorization"] == nil)
            #expect(second.headers["user-agent"] == "aggregate/0.1.0")
        }
    }

    @Test func aRedirectOnTheSameOriginKeepsThem() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), extra: ["cabify": Self.keyed],
                                           faults: ["cabify": [Fault(redirectTo: "/shop-b/Products.json")]]) { session in
            let run = try await session.run()
            #expect(run.status == 0)
            let second = try #require(session.server.control.requests(to: "shop-b").first)
            #expect(second.headers["x-api-key"] == "s3cret-key")
            #expect(second.headers["authorization"] == "Bearer s3cret-token")
        }
    }
}
