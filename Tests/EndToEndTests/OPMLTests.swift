import FeedConfig
import FeedSourceTesting
import Foundation
import Testing

/// Subscriptions in and out as OPML 2.0 (issue 29): `import`, `sources --format opml`,
/// `serve`'s `/sources.opml`, and the round trip.
@Suite(.serialized) struct OPMLTests {
    static let sourcesYml = """
        # My sources (this comment stays)
        sources:
          - id: news          # the local paper
            plugin: feed
            url: https://news.example.com/rss.xml

        # Digests come after the sources.
        digests:
          - name: daily
            sources: [news]

        """

    static let subscriptions = """
        <?xml version="1.0" encoding="UTF-8"?>
        <opml version="2.0">
          <head><title>Exported from a reader</title></head>
          <body>
            <outline text="Tech">
              <outline text="Swift">
                <outline type="rss" text="Swift.org" xmlUrl="https://www.swift.org/atom.xml" htmlUrl="https://www.swift.org/"/>
              </outline>
              <outline type="rss" text="Hacker News: Front Page" xmlUrl="https://hnrss.org/frontpage"/>
            </outline>
            <outline type="rss" text="Harbour City Herald" xmlUrl="https://NEWS.example.com/rss.xml/"/>
            <outline type="rss" text="Café Crème" xmlUrl="https://cafe.example.org/feed"/>
            <outline type="rss" text="Café Crème" xmlUrl="https://cafe.example.org/other"/>
          </body>
        </opml>
        """

    static let added = """
          - id: swift-org   # imported from subscriptions.opml
            name: "Swift.org"
            plugin: feed
            url: "https://www.swift.org/atom.xml"
            options:
              tags: ["Tech", "Swift"]

          - id: hacker-news-front-page   # imported from subscriptions.opml
            name: "Hacker News: Front Page"
            plugin: feed
            url: "https://hnrss.org/frontpage"
            options:
              tags: ["Tech"]

          - id: cafe-creme   # imported from subscriptions.opml
            name: "Café Crème"
            plugin: feed
            url: "https://cafe.example.org/feed"

          - id: cafe-creme-2   # imported from subscriptions.opml
            name: "Café Crème"
            plugin: feed
            url: "https://cafe.example.org/other"

        """

    @Test func importAppendsEntriesKeepsTheFileAndSkipsWhatIsConfigured() async throws {
        let workspace = try Workspace(sourcesYml: Self.sourcesYml)
        try workspace.write("subscriptions.opml", Self.subscriptions)

        let dry = try await workspace.aggregate("import", "subscriptions.opml", "--dry-run")
        #expect(dry.status == 0)
        #expect(dry.stdout == Self.added)
        #expect(try workspace.read("Sources.yml") == Self.sourcesYml)

        let run = try await workspace.aggregate("import", "subscriptions.opml")
        #expect(run.status == 0)
        #expect(run.stderrLines == [
            #"aggregate: skipped "Harbour City Herald": https://NEWS.example.com/rss.xml/ is already configured as news"#,
            "aggregate: added 4 feeds to Sources.yml (1 skipped)",
            // No `defaults: refresh:`: serve would poll every feed at its cache TTL.
            "aggregate: serve refreshes each of them every 300 s (the cache TTL); `defaults:` with `refresh: 1h` in Sources.yml refreshes every source without its own hourly",
        ])
        // The entries go at the end of the sources list, before the next key and its comment.
        let expected = Self.sourcesYml.replacingOccurrences(
            of: "\n# Digests come after the sources.", with: "\n" + Self.added + "\n# Digests come after the sources.")
        #expect(try workspace.read("Sources.yml") == expected)
        #expect(try await workspace.aggregate("validate").status == 0)

        // Importing again, or importing an export of the file, adds nothing.
        let again = try await workspace.aggregate("import", "subscriptions.opml")
        #expect(again.stderrLines.last == "aggregate: nothing to add: every feed in subscriptions.opml is configured already")
        let export = try await workspace.aggregate("sources", "--format", "opml")
        #expect(export.stdout.contains(#"<outline text="Tech">"#))
        #expect(export.stdout.contains(#"<outline type="rss" text="Swift.org" title="Swift.org" xmlUrl="https://www.swift.org/atom.xml"/>"#))
        try workspace.write("export.opml", export.stdout)
        let roundTrip = try await workspace.aggregate("import", "export.opml")
        #expect(roundTrip.status == 0)
        #expect(roundTrip.stderrLines.last == "aggregate: nothing to add: every feed in export.opml is configured already")
        #expect(try workspace.read("Sources.yml") == expected)
    }

    /// A feed configured but disabled is said so on import, and left out of an export
    /// unless asked for: a reader importing the list would follow what this one does not.
    @Test func aDisabledFeedIsSaidOnImportAndLeftOutOfTheExport() async throws {
        let workspace = try Workspace(sourcesYml: Self.sourcesYml.replacingOccurrences(
            of: "    url: https://news.example.com/rss.xml\n", with: "    url: https://news.example.com/rss.xml\n    enabled: false\n"))
        try workspace.write("subscriptions.opml", Self.subscriptions)
        let run = try await workspace.aggregate("import", "subscriptions.opml")
        #expect(run.stderrLines.first == #"aggregate: skipped "Harbour City Herald": https://NEWS.example.com/rss.xml/ is already configured as news, "#
            + "but disabled: `aggregate enable news` reads it")
        let export = try await workspace.aggregate("sources", "--format", "opml")
        #expect(export.status == 0)
        #expect(!export.stdout.contains("news.example.com") && export.stdout.contains("https://www.swift.org/atom.xml"), "\(export.stdout)")
        let all = try await workspace.aggregate("sources", "--format", "opml", "--include-disabled")
        #expect(all.stdout.contains(#"xmlUrl="https://news.example.com/rss.xml""#), "\(all.stdout)")
    }

    /// The attack as found: a title whose line break YAML knows (LS, PS, NEL, CR) closes
    /// the `#` comment and adds a `plugin: exec` source. Imported, each stays in its
    /// comment: validate counts the sources meant, and the next run executes nothing.
    @Test(arguments: ["\u{2028}", "\u{2029}", "\u{85}", "&#13;", "&#10;"])
    func anImportedTitleCannotAddASource(_ lineBreak: String) async throws {
        let workspace = try Workspace(sourcesYml: Self.sourcesYml)
        let marker = workspace.url.appendingPathComponent("pwned").path
        let title = "Nice feed\(lineBreak)  - id: pwn\(lineBreak)    plugin: exec\(lineBreak)    command: [touch, \(marker)]\(lineBreak)#"
        try workspace.write("evil.opml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <opml version="2.0"><body>
            <outline type="rss" text="\(title)" xmlUrl="https://evil.example/feed"/>
            </body></opml>
            """)
        let run = try await workspace.aggregate("import", "evil.opml")
        #expect(run.status == 0, "\(run.stderr)")
        let written = try workspace.read("Sources.yml")
        #expect(!written.contains("plugin: exec\n"), "\(written)")
        let validate = try await workspace.aggregate("validate")
        #expect(validate.stderrLines == ["Sources.yml: ok, 2 sources (2 enabled)"])
        _ = try await workspace.run("--offline")
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func aMalformedOPMLIsAnErrorWithItsLine() async throws {
        let workspace = try Workspace(sourcesYml: Self.sourcesYml)
        try workspace.write("broken.opml", "<?xml version=\"1.0\"?>\n<opml version=\"2.0\">\n<body>\n<outline text=\"a\" xmlUrl=\"https://x.example/f\">\n</body></opml>\n")
        let run = try await workspace.aggregate("import", "broken.opml")
        #expect(run.status == 2)
        #expect(run.stderrLines == ["broken.opml:5: not well-formed XML: an end tag that does not match its start tag, or a missing one (an OPML file from a feed reader's export is expected)"])
        #expect(try workspace.read("Sources.yml") == Self.sourcesYml)
        try workspace.write("feed.opml", "<rss version=\"2.0\"><channel/></rss>")
        let wrong = try await workspace.aggregate("import", "feed.opml")
        #expect(wrong.status == 2)
        #expect(wrong.stderrLines == ["feed.opml:1: the document is <rss>, not <opml> (an OPML file from a feed reader's export is expected)"])
    }

    /// serve lists feeds by their own URL and every other source by its served feed.
    @Test func serveWritesSourcesOPML() async throws {
        try await ServeTests.withServe { _, served in
            let answer = try await ServeTests.get(served.base + "/sources.opml")
            #expect(answer.status == 200)
            #expect(answer.headers.first(name: "content-type") == "text/x-opml; charset=utf-8")
            #expect(answer.body.contains(#"<outline type="rss" text="cabify" title="cabify" xmlUrl="\#(served.base)/feed.atom?source=cabify"/>"#))
            #expect(answer.body.contains(#"xmlUrl="\#(served.base)/feed.atom?source=target"/>"#))
        }
    }
}
