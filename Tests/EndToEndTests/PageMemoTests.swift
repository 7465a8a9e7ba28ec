import FeedCore
import FeedSourceTesting
import Foundation
import FixtureCatalogue
import FixtureServer
import SourceCatalogue
import Testing

/// Warm runs read the pages a source mapped before, not the upstream JSON again (issue 14),
/// and only while that is the same body, the same build and the same settings.
@Suite struct PageMemoTests {
    static let cabify = FixtureWorld.only("cabify")

    /// `statement` in PostgreSQL's words; in SQLite's, bodies are in a table of their own.
    static func sql(_ workspace: Workspace, _ statement: String) async throws -> String {
        try await workspace.cacheSQL(statement.replacingOccurrences(of: "UPDATE http_cache SET body", with: "UPDATE http_body SET body"),
                                     postgres: statement.replacingOccurrences(of: "CAST('not json' AS BLOB)", with: "'not json'::bytea"))
    }

    /// The cached body is made unreadable behind the memo's back: a fresh memo still serves
    /// the same cards (so the body was not read); once the body's stamp changes (a new 200
    /// was stored) the memo no longer counts and the body is read, and fails.
    @Test(arguments: StateKind.all) func aWarmRunReadsTheMappedPageWhileItsBodyIsTheStoredOne(_ state: StateKind) async throws {
        try await FixtureWorld.withSession(sources: Self.cabify, extra: ["cabify": "    fallback: none\n"], state: state) { session in
            let first = try await session.run()
            #expect(first.status == 0)
            #expect(first.stdoutLines.count == 3)
            #expect(try await Self.sql(session.workspace, "SELECT count(*) FROM mapped_page") == "1\n")

            _ = try await Self.sql(session.workspace, "UPDATE http_cache SET body = CAST('not json' AS BLOB)")
            let warm = try await session.run()
            #expect(warm.status == 0)
            #expect(warm.stdout == first.stdout)
            #expect(warm.stderr == "")
            #expect(session.server.control.requests(to: "cabify").count == 1)

            _ = try await Self.sql(session.workspace, "UPDATE http_cache SET stored_at = stored_at + 1")
            // The page is stale now, and the body it would be read from again is damaged: the
            // damaged copy is dropped and the page asked of the upstream in the same run.
            let reread = try await session.run()
            #expect(reread.status == 0)
            #expect(reread.stdout == first.stdout)
            #expect(reread.stderr == "")
            #expect(session.server.control.requests(to: "cabify").count == 2)
        }
    }

    /// Changed options map the same body differently: the old mapping is never served.
    @Test(arguments: StateKind.all) func changedOptionsNeverReadTheOldMapping(_ state: StateKind) async throws {
        try await FixtureWorld.withSession(sources: Self.cabify, state: state) { session in
            let first = try await session.run()
            #expect(first.stdout.contains(#""currency":"EUR""#))
            try session.workspace.write("Sources.yml", FixtureWorld.sourcesYml(
                base: session.base, sources: Self.cabify, extra: ["cabify": "    options:\n      currency: USD\n"]))
            let changed = try await session.run()
            #expect(changed.status == 0)
            #expect(changed.stdoutLines.count == 3)
            #expect(changed.stdout.contains(#""currency":"USD""#))
            #expect(!changed.stdout.contains(#""currency":"EUR""#))
            #expect(session.server.control.requests(to: "cabify").count == 1)
            #expect(try await Self.sql(session.workspace, "SELECT count(*) FROM mapped_page") == "2\n")
        }
    }

    /// A warm page reads only the remembered cards it needs: a memo cut short past them
    /// still serves page 1; a full dump then reaches the damage and reads the page again
    /// (here from the cached body), without repeating the cards it already had.
    @Test func aWarmPageReadsOnlyTheRememberedCardsItNeeds() async throws {
        let server = FixtureServer.standard(FixtureCatalogue.sources, scale: 5)
        try await server.withRunning { base in
            let workspace = try Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, sources: FixtureWorld.only("target")))
            let dump = try await workspace.run("--all", "--format", "jsonl")
            #expect(dump.stdoutLines.count == 100)
            let pageOne = try await workspace.run("--format", "jsonl")
            #expect(pageOne.stdoutLines == Array(dump.stdoutLines.prefix(20)))

            let whole = try await workspace.cacheSQL("SELECT length(page) FROM mapped_page_body")
            _ = try await workspace.cacheSQL("UPDATE mapped_page_body SET page = substr(page, 1, length(page) - 200)")
            let warm = try await workspace.run("--format", "jsonl")
            #expect(warm.stdout == pageOne.stdout)
            #expect(server.control.requests(to: "target").count == 1)

            let again = try await workspace.run("--all", "--format", "jsonl")
            #expect(again.status == 0)
            #expect(again.stderr == "")
            #expect(again.stdout == dump.stdout)
            // Read again from the cached body, which is fresh, and remembered whole again.
            #expect(server.control.requests(to: "target").count == 1)
            #expect(try await workspace.cacheSQL("SELECT length(page) FROM mapped_page_body") == whole)
        }
    }
}
