import FeedCore
import FeedSourceTesting
import FixtureKit
import FixtureServer
import Foundation
import Testing

/// `plugin: feed` through the built binary against the fixture server's `/feed/…` routes.
@Suite(.serialized) struct WebFeedEndToEndTests {
    static func entries(_ ids: String...) -> [FixtureSourceEntry] {
        ids.flatMap { FixtureWorld.enabled($0) }
    }

    /// A feed that answers with an ETag is revalidated, and a 304 serves the cached cards.
    @Test func aConditionalGetIsServedFromTheCache() async throws {
        let ttl = ["feed-blog": "    cache_ttl: 0\n"]
        try await FixtureWorld.withSession(sources: Self.entries("feed-blog"), extra: ttl,
                                           faults: ["feed": [Fault(etag: "\"blog-1\"")]]) { session in
            let first = try await session.run("--format", "jsonl")
            #expect(first.status == 0)
            #expect(first.stdoutLines.count == 5)
            let again = try await session.run("--format", "jsonl")
            #expect(again.stdout == first.stdout)
            #expect(session.requests.map(\.status) == [200, 304])
            #expect(session.requests.last?.headers["if-none-match"] == "\"blog-1\"")
        }
    }

    /// A broken feed fails alone; an HTML page names the feeds it advertises.
    @Test func aBrokenFeedIsIsolatedAndAnHTMLPageNamesItsFeeds() async throws {
        try await FixtureWorld.withSession(sources: []) { session in
            let base = session.base.absoluteString
            try session.workspace.write("Sources.yml", """
                sources:
                  - id: news
                    plugin: feed
                    url: \(base)/feed/news.rss.xml
                  - id: homepage
                    plugin: feed
                    url: \(base)/feed/page.html
                    fallback: none

                """)
            let run = try await session.run("--format", "jsonl")
            #expect(run.status == 3)
            #expect(run.stdoutLines.count == 6)
            #expect(run.stderrLines == [
                "homepage: the URL gives an HTML page, not a feed; the page names \(base)/feed/news.rss.xml, \(base)/feed/blog.atom.xml: set url: to one (\(base)/feed/page.html)",
            ])
        }
    }

    /// An RFC 5005 archive is walked page by page; --page 2 reads only what it needs.
    @Test func anArchiveIsWalkedAsPages() async throws {
        try await FixtureWorld.withSession(sources: Self.entries("feed-archive")) { session in
            let all = try await session.run("--format", "jsonl", "--per-page", "10")
            #expect(all.status == 0)
            #expect(try all.stdoutLines.map { try JSONDecoder().decode(Card.self, from: Data($0.utf8)).upstreamID }
                    == (1...6).map { "urn:archive:\($0)" })
            #expect(session.requests.map { $0.query ?? "" } == ["", "page=2", "page=3"])
        }
    }

    /// Offline, the example entries of the shipped Sources.yml show the snapshots.
    @Test func theShippedExamplesWorkOffline() async throws {
        let workspace = try Workspace(sourcesYml: try Workspace.shippedSourcesYml)
        let run = try await workspace.aggregate("--offline", "--source", "blog", "--source", "news", "--source", "podcast",
                                                "--format", "jsonl", "--per-page", "100")
        #expect(run.status == 0)
        #expect(run.stdoutLines.count == 15)
        #expect(run.stderr == "")
        let shown = try await workspace.aggregate("--offline", "show", "podcast:small-batch-111", "--format", "jsonl")
        #expect(shown.status == 0)
        #expect(shown.stdout.contains(#""title":"Ep. 111: Knives from old saw blades""#))
    }
    /// A post's content is kept as the allow-list keeps it, printed as text by `show`, and
    /// carried by every feed we serve, with a podcast's episode as its enclosure.
    @Test func contentAndEnclosuresAreKeptShownAndServed() async throws {
        try await FixtureWorld.withSession(sources: Self.entries("feed-podcast", "feed-blog")) { session in
            let show = try await session.run("show", "feed-podcast:small-batch-112", "--format", "text", environment: ["COLUMNS": "80"])
            #expect(show.status == 0)
            #expect(show.stdout.contains("""

                Ada Brennan on keeping a 1920s press running, and why she still sets type by
                hand.

                Links: the press [1]

                [1] https://example.org/press

                """))
            #expect(!show.stdout.contains("<p>"))

            let rss = try await session.run("--source", "feed-podcast", "--format", "rss", "--per-page", "1")
            #expect(rss.stdout.contains(#"<enclosure url="https://cdn.podcast.example.net/episodes/112.mp3" length="48210934" type="audio/mpeg"/>"#))
            #expect(rss.stdout.contains("<content:encoded>&lt;p&gt;Ada Brennan on keeping a 1920s press running, and why she still sets type by hand.&lt;/p&gt;"))
            #expect(rss.stdout.contains(#"xmlns:content="http://purl.org/rss/1.0/modules/content/""#))
            let atom = try await session.run("--source", "feed-podcast", "--format", "atom", "--per-page", "1")
            #expect(atom.stdout.contains(#"<link rel="enclosure" type="audio/mpeg" href="https://cdn.podcast.example.net/episodes/112.mp3" length="48210934"/>"#))
            let json = try await session.run("--source", "feed-podcast", "--format", "jsonfeed", "--per-page", "1")
            #expect(json.stdout.contains(#""attachments":[{"mime_type":"audio/mpeg","size_in_bytes":48210934,"url":"https://cdn.podcast.example.net/episodes/112.mp3"}]"#))
            #expect(json.stdout.contains(#""content_html":"<p>Ada Brennan on keeping a 1920s press running, and why she still sets type by hand.</p>"#))

            // A relative image in a post's content is resolved against the post; nothing else changes.
            let blog = try await session.run("--source", "feed-blog", "--format", "jsonl", "--per-page", "1")
            #expect(blog.stdout.contains(#""content":"<p><img src=\"https://blog.example.org/img/incremental-histogram.png\" alt=\"Histogram\">We timed 400 incremental builds on two machines.</p>"#))
        }
    }
}
