import FeedCore
import FeedSourceTesting
import FixtureKit
import FixtureServer
import Foundation
import Testing

/// Responses fetched with one key are never served to a request made with another
/// (issue 28, defect 2): the cache keys a request by its source, its URL and a keyed hash
/// of its credentials.
@Suite(.serialized) struct CredentialSeparationTests {
    /// Two sources asking the same URL, one with the key the upstream wants and one with
    /// a wrong key, in a header or in the query.
    @Test func twoSourcesWithDifferentKeysNeverShareAnEntry() async throws {
        try await FixtureWorld.withSession(sources: [], options: FixtureOptions(requiredKeys: ["reqres": "right-key"])) { session in
            let url = session.base.appendingPathComponent("reqres").absoluteString
            try session.workspace.write("Sources.yml", """
                sources:
                  - id: account-a
                    plugin: reqres
                    url: \(url)
                    headers:
                      x-api-key: right-key
                  - id: account-b
                    plugin: reqres
                    url: \(url)
                    headers:
                      x-api-key: ${B_KEY}
                    retries: 1
                    fallback: none

                """)
            let first = try await session.run("--source", "account-a", "--per-page", "5", "--format", "jsonl",
                                              environment: ["B_KEY": "wrong-key"])
            #expect(first.status == 0)
            #expect(first.stdoutLines.count == 5)
            let other = try await session.run("--source", "account-b", "--per-page", "5", environment: ["B_KEY": "wrong-key"])
            #expect(other.stdout == "")
            #expect(other.status == 1)
            #expect(other.stderrLines.first == "account-b: unauthorized (401): set REQRES_API_KEY to a valid reqres.in key (\(url)/api/users?page=1)")
            #expect(session.server.control.requests(to: "reqres").map(\.status) == [200, 401])

            // The key is rotated within the TTL: the new key is asked, not the old answer served.
            let rotated = try await session.run("--source", "account-b", "--per-page", "5", environment: ["B_KEY": "right-key"])
            #expect(rotated.status == 0)
            #expect(rotated.stdoutLines.count == 5)
            #expect(session.server.control.requests(to: "reqres").map(\.status) == [200, 401, 200])
            // And account A, still within its TTL, is served from the cache, as before.
            let again = try await session.run("--source", "account-a", "--per-page", "5", environment: ["B_KEY": "wrong-key"])
            #expect(again.stdout == first.stdout)
            #expect(session.server.control.requests(to: "reqres").count == 3)
        }
    }
}
