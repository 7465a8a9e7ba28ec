import FeedCore
import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// Only a response the source could parse enters the cache (issue 15, defect 1).
@Suite(.serialized) struct CachePoisoningTests {
    static let cabify = FixtureWorld.only("cabify")
    static let htmlPage = Fault(body: "<html><body>Service Unavailable</body></html>")

    @Test(arguments: StateKind.all) func aBrokenOKIsNotCachedAndTheRecoveredUpstreamIsAskedAgain(_ state: StateKind) async throws {
        try await FixtureWorld.withSession(sources: Self.cabify, extra: ["cabify": "    fallback: none\n"],
                                           faults: ["cabify": [Self.htmlPage, .none]], state: state) { session in
            let broken = try await session.run()
            #expect(broken.status == 1)
            #expect(broken.stderrLines.first?.hasPrefix("cabify: unreadable response: the body is not JSON") == true)
            let recovered = try await session.run()
            #expect(recovered.status == 0)
            #expect(recovered.stdoutLines.count == 3)
            #expect(session.server.control.requests(to: "cabify").count == 2)
        }
    }

    @Test(arguments: StateKind.all) func aBrokenOKNeverReplacesTheLastGoodCopy(_ state: StateKind) async throws {
        try await FixtureWorld.withSession(sources: Self.cabify, faults: ["cabify": [.none, Self.htmlPage]], state: state) { session in
            let good = try await session.run()
            #expect(good.status == 0)
            let refreshed = try await session.run("--refresh")
            #expect(refreshed.status == 0)
            #expect(refreshed.stdoutLines.count == 3)
            #expect(refreshed.stdout.contains(#""origin":"cache""#))
            #expect(refreshed.stderrLines.count == 1)
            #expect(refreshed.stderrLines.first?.hasPrefix("cabify: unreadable response: the body is not JSON") == true)
            #expect(refreshed.stderrLines.first?.contains("; using cached response from ") == true)
        }
    }

    /// A stored body the source can no longer read (here: edited to be broken, and the
    /// pages mapped from it dropped, so the source reads the body) is dropped, not served
    /// again after a 304 or while fresh: the same run asks the upstream (issue 28, defect 10).
    @Test(arguments: StateKind.all) func aStoredBodyThatNoLongerParsesIsForgotten(_ state: StateKind) async throws {
        try await FixtureWorld.withSession(sources: Self.cabify, extra: ["cabify": "    fallback: none\n"], state: state) { session in
            #expect(try await session.run().status == 0)
            _ = try await session.workspace.cacheSQL("UPDATE http_body SET body = CAST('not json' AS BLOB); DELETE FROM mapped_page",
                                                     postgres: "UPDATE http_cache SET body = 'not json'::bytea; DELETE FROM mapped_page")
            let broken = try await session.run()
            #expect(broken.status == 0)
            #expect(broken.stdoutLines.count == 3)
            #expect(broken.stderr == "")
            #expect(session.server.control.requests(to: "cabify").count == 2)
            let again = try await session.run()
            #expect(again.status == 0)
            #expect(again.stdout == broken.stdout)
            #expect(session.server.control.requests(to: "cabify").count == 2)
        }
    }
}
