import FeedSourceTesting
import FixtureCatalogue
import FixtureServer
import Foundation
import Testing

/// `aggregate add URL` (issue 42) against the fixture server: a feed's URL, a page that
/// advertises one, a page that advertises several (`--pick`), and every way it refuses.
@Suite struct AddTests {
    static let sourcesYml = """
        # My feeds (this comment stays)
        sources:
          - id: blog
            plugin: feed
            url: https://blog.example.org/atom.xml

        """

    static func withServer(_ body: (URL, FixtureServer, Workspace) async throws -> Void) async throws {
        let server = FixtureServer.standard(FixtureCatalogue.sources)
        try await server.withRunning { base in
            try await body(base, server, try Workspace(sourcesYml: sourcesYml))
        }
    }

    @Test func aFeedsURLIsAddedUnderItsTitle() async throws {
        try await Self.withServer { base, server, workspace in
            let run = try await workspace.aggregate("add", "\(base)/feed/news.rss.xml")
            #expect(run.status == 0)
            #expect(run.stderrLines == ["aggregate: added harbour-city-herald-top-stories (Harbour City Herald - Top Stories) to Sources.yml: \(base)/feed/news.rss.xml"])
            #expect(try workspace.read("Sources.yml") == Self.sourcesYml + """

                  - id: harbour-city-herald-top-stories
                    name: "Harbour City Herald - Top Stories"
                    plugin: feed
                    url: "\(base)/feed/news.rss.xml"

                """)
            #expect(server.control.requests(to: "feed").count == 1)
            let sources = try await workspace.aggregate("sources", "--format", "jsonl")
            #expect(sources.stdout.contains(#""name":"Harbour City Herald - Top Stories""#), "\(sources.stdout)")

            // Twice: nothing added, nothing fetched.
            let again = try await workspace.aggregate("add", "\(base)/feed/news.rss.xml/")
            #expect(again.status == 0)
            #expect(again.stderrLines == ["aggregate: \(base)/feed/news.rss.xml/ is already configured as harbour-city-herald-top-stories; nothing added"])
            #expect(server.control.requests(to: "feed").count == 1)
        }
    }

    @Test func aPageThatAdvertisesOneFeedAddsThatFeed() async throws {
        try await Self.withServer { base, server, workspace in
            let run = try await workspace.aggregate("add", "\(base)/feed/show.html", "--id", "radio", "--tag", "Food")
            #expect(run.status == 0, "\(run.stderr)")
            // The page's javascript: link is not a feed and is not offered.
            #expect(run.stderrLines == ["aggregate: added radio (Small Batch Radio) to Sources.yml: \(base)/feed/podcast.xml"])
            #expect(try workspace.read("Sources.yml").hasSuffix("""
                  - id: radio   # advertised by \(base)/feed/show.html
                    name: "Small Batch Radio"
                    plugin: feed
                    url: "\(base)/feed/podcast.xml"
                    options:
                      tags: ["Food"]

                """))
            #expect(server.control.requests(to: "feed").map(\.path) == ["/feed/show.html", "/feed/podcast.xml"])
            #expect(try await workspace.aggregate("validate").stderrLines == ["Sources.yml: ok, 2 sources (2 enabled)"])
        }
    }

    @Test func aPageThatAdvertisesSeveralFeedsAsksWhichOne() async throws {
        try await Self.withServer { base, _, workspace in
            let page = "\(base)/feed/page.html"
            // Not on a terminal: the feeds are listed, nothing is written, exit 2.
            let listed = try await workspace.aggregate("add", page)
            #expect(listed.status == 2)
            #expect(listed.stderrLines == [
                "aggregate: add: \(page) advertises 2 feeds:",
                "  1. Top stories — \(base)/feed/news.rss.xml",
                "  2. untitled — \(base)/feed/blog.atom.xml",
                "Pass --pick N to add one of them (or add its URL).",
            ])
            #expect(try workspace.read("Sources.yml") == Self.sourcesYml)

            let dry = try await workspace.aggregate("add", page, "--pick", "2", "--name", "The blog", "--dry-run")
            #expect(dry.status == 0)
            #expect(dry.stdout == """
                  - id: the-blog   # advertised by \(page)
                    name: "The blog"
                    plugin: feed
                    url: "\(base)/feed/blog.atom.xml"

                """)
            #expect(try workspace.read("Sources.yml") == Self.sourcesYml)

            let outOfRange = try await workspace.aggregate("add", page, "--pick", "3")
            #expect(outOfRange.status == 2)
            #expect(outOfRange.stderrLines == ["aggregate: add: \(page) advertises 2 feeds; --pick 3 is not one of them"])
        }
    }

    @Test func whatIsNotAFeedIsRefusedAndNothingIsWritten() async throws {
        try await Self.withServer { base, _, workspace in
            let cases: [(arguments: [String], status: Int32, message: String)] = [
                (["\(base)/feed/about.html"], 2,
                 "aggregate: add: \(base)/feed/about.html is not a feed: it is a web page that names no feed (no <link rel=\"alternate\"> to RSS, Atom or JSON Feed)"),
                (["\(base)/feed/missing.xml"], 1, "aggregate: add: \(base)/feed/missing.xml answered HTTP 404"),
                (["\(base)/cabify/Products.json"], 2,
                 "aggregate: add: \(base)/cabify/Products.json is not a feed: the body is not a feed (neither XML nor a JSON Feed)"),
                (["file:///etc/passwd"], 2, "aggregate: add: \"file:///etc/passwd\" is not a web address; give the feed's or its page's http:// or https:// URL"),
                (["\(base)/feed/news.rss.xml", "--id", "blog"], 2, "aggregate: add: the id blog is taken in Sources.yml; pass another --id"),
                (["\(base)/feed/news.rss.xml", "--id", "Not An Id"], 2,
                 "aggregate: add: \"Not An Id\" is not a valid id: use lowercase letters, digits and -, starting with a letter or digit"),
            ]
            for (arguments, status, message) in cases {
                let run = try await workspace.aggregate(arguments: ["add"] + arguments)
                #expect(run.status == status, "\(arguments)")
                #expect(run.stderrLines == [message])
                #expect(run.stdout == "")
            }
            #expect(try workspace.read("Sources.yml") == Self.sourcesYml)
        }
    }

    /// A shop's page with no feed but structured data (issue 63): offered as a `plugin:
    /// html` source with the cards it would make; added with `--html`, not without.
    @Test func aPageThatDescribesItselfIsOfferedAsAnHTMLSource() async throws {
        try await Self.withServer { base, server, workspace in
            let offered = try await workspace.aggregate("add", "\(base)/page/shop.html")
            #expect(offered.status == 2)
            #expect(offered.stderrLines == [
                "aggregate: add: \(base)/page/shop.html advertises no feed, but describes itself: a plugin: html source would make 3 cards",
                "  Quiet 45 dishwasher — £1299.00", "  Compact 60 dishwasher — £649.00", "  Kettle à la carte — €24.50",
                "aggregate: add: pass --html to add it as a web-page source (nothing was added)",
            ])
            #expect(try workspace.read("Sources.yml") == Self.sourcesYml)
            let added = try await workspace.aggregate("add", "\(base)/page/product.html", "--html")
            #expect(added.status == 0)
            #expect(added.stderrLines.last == "aggregate: added quiet-45-dishwasher (Quiet 45 dishwasher) to Sources.yml: \(base)/page/product.html")
            #expect(try workspace.read("Sources.yml") == Self.sourcesYml + """

                  - id: quiet-45-dishwasher   # a web page, by its structured data
                    name: "Quiet 45 dishwasher"
                    plugin: html
                    url: "\(base)/page/product.html"

                """)
            let cards = try await workspace.aggregate("--source", "quiet-45-dishwasher", "--format", "jsonl")
            #expect(cards.stdout.contains(#""price":{"amount":1249.5,"currency":"GBP"}"#), "\(cards.stdout)\(cards.stderr)")
            // A page that neither names a feed nor describes itself is refused as before.
            let neither = try await workspace.aggregate("add", "\(base)/page/table.html", "--html")
            #expect(neither.status == 2)
            #expect(neither.stderrLines == ["aggregate: add: \(base)/page/table.html is not a feed: it is a web page that names no feed (no <link rel=\"alternate\"> to RSS, Atom or JSON Feed)"])
            _ = server
        }
    }
}
