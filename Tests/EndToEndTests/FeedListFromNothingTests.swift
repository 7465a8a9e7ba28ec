import FeedSourceTesting
import FixtureCatalogue
import FixtureServer
import Foundation
import Testing

/// A feed list of one's own from nothing (issue 61): `add` and `import` make Sources.yml
/// where it is looked for when there is none, and add to an empty one; `disable` and
/// `enable` through the same checked whole-file edit; a run with no sources says what to do.
@Suite struct FeedListFromNothingTests {
    /// The workspace's own `$XDG_CONFIG_HOME`, so no test reads the machine's.
    static func environment(_ workspace: Workspace) -> [String: String] {
        ["XDG_CONFIG_HOME": workspace.url.appendingPathComponent("config").path]
    }

    @Test func addMakesTheFileInTheConfigDirectoryWhenThereIsNone() async throws {
        let server = FixtureServer.standard(FixtureCatalogue.sources)
        try await server.withRunning { base in
            let workspace = try Workspace()
            let environment = Self.environment(workspace)
            // Named as the other messages name files: from the working directory.
            let made = "config/aggregate/Sources.yml"
            let run = try await workspace.aggregate("add", "\(base)/feed/news.rss.xml", environment: environment)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stderrLines == [
                "aggregate: created \(made)",
                "aggregate: added harbour-city-herald-top-stories (Harbour City Herald - Top Stories) to \(made): \(base)/feed/news.rss.xml",
            ])
            #expect(try workspace.read("config/aggregate/Sources.yml") == """
                # Sources for `aggregate`: the feeds it reads (docs/sources-yml.md).
                # `aggregate add URL`, `aggregate import FILE.opml` and `aggregate remove ID` change this list.
                defaults:
                  refresh: 1h   # how often `serve` fetches each feed (a source may say its own refresh:)
                sources:

                  - id: harbour-city-herald-top-stories
                    name: "Harbour City Herald - Top Stories"
                    plugin: feed
                    url: "\(base)/feed/news.rss.xml"

                """)
            // The next run reads it from there, and prints the feed.
            let feed = try await workspace.run("--format", "jsonl", "--all", environment: environment)
            #expect(feed.status == 0, "\(feed.stderr)")
            #expect(feed.stdoutLines.count == 6)
            #expect(feed.stdoutLines.allSatisfy { $0.contains(#""source":"harbour-city-herald-top-stories""#) })
            // A reader's subscriptions go into the same file; one goes again.
            try workspace.write("subscriptions.opml", OPMLTests.subscriptions)
            let imported = try await workspace.aggregate("import", "subscriptions.opml", environment: environment)
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stderrLines == ["aggregate: added 5 feeds to \(made)"])
            #expect(try await workspace.aggregate("remove", "hacker-news-front-page", environment: environment).status == 0)
            let listed = try await workspace.aggregate("sources", "--format", "jsonl", environment: environment)
            #expect(listed.stdoutLines.count == 5)
            #expect(!listed.stdout.contains("hnrss"))
        }
    }

    /// An empty file, `sources: []` and `sources:` are lists with nothing in them yet.
    @Test(arguments: ["", "sources: []\n", "sources:\n", "# mine\nsources: []   # none yet\n"])
    func anEmptyListIsAddedTo(_ start: String) async throws {
        let server = FixtureServer.standard(FixtureCatalogue.sources)
        try await server.withRunning { base in
            let workspace = try Workspace(sourcesYml: start)
            let environment = Self.environment(workspace)
            #expect(try await workspace.aggregate("validate", environment: environment).status == 0)
            let empty = try await workspace.run("--format", "jsonl", environment: environment)
            #expect(empty.status == 2)
            #expect(empty.stdout.isEmpty)
            #expect(empty.stderrLines == [
                "aggregate: Sources.yml lists no sources yet: add a feed with `aggregate add URL` or `aggregate import FILE.opml`",
            ])
            let run = try await workspace.aggregate("add", "\(base)/feed/news.rss.xml", environment: environment)
            #expect(run.status == 0, "\(run.stderr)")
            let text = try workspace.read("Sources.yml")
            #expect(text.hasSuffix("""
                sources:\(start.contains("# none yet") ? "   # none yet" : "")

                  - id: harbour-city-herald-top-stories
                    name: "Harbour City Herald - Top Stories"
                    plugin: feed
                    url: "\(base)/feed/news.rss.xml"

                """), "\(text)")
            #expect(text.hasPrefix(start.hasPrefix("# mine") ? "# mine\n" : "sources:"))
            #expect(try await workspace.run("--format", "jsonl", environment: environment).stdoutLines.count == 6)
        }
    }

    static let sourcesYml = """
        sources:
          - id: news          # the local paper
            plugin: feed
            url: https://news.example.com/rss.xml

          - id: blog
            plugin: feed
            enabled: false    # too many posts
            url: https://blog.example.org/atom.xml

          - {id: flow, plugin: feed, url: "https://flow.example.net/feed"}

        """

    @Test func disableAndEnableChangeOneLine() async throws {
        let workspace = try Workspace(sourcesYml: Self.sourcesYml)
        let disabled = try await workspace.aggregate("disable", "news")
        #expect(disabled.status == 0, "\(disabled.stderr)")
        #expect(disabled.stderrLines == ["aggregate: disabled news in Sources.yml"])
        let enabled = try await workspace.aggregate("enable", "blog")
        #expect(enabled.stderrLines == ["aggregate: enabled blog in Sources.yml"])
        #expect(try workspace.read("Sources.yml") == """
            sources:
              - id: news          # the local paper
                enabled: false
                plugin: feed
                url: https://news.example.com/rss.xml

              - id: blog
                plugin: feed
                enabled: true    # too many posts
                url: https://blog.example.org/atom.xml

              - {id: flow, plugin: feed, url: "https://flow.example.net/feed"}

            """)
        let listed = try await workspace.aggregate("sources", "--format", "jsonl")
        #expect(listed.stdoutLines.map { $0.contains(#""enabled":true"#) } == [false, true, true])
        // Back as it was: a line the writer added goes again.
        #expect(try await workspace.aggregate("enable", "news").status == 0)
        #expect(try await workspace.aggregate("disable", "blog").status == 0)
        #expect(try workspace.read("Sources.yml") == Self.sourcesYml)
        // Already so, unknown, or written on one line: said, and the file as it was.
        let again = try await workspace.aggregate("disable", "blog")
        #expect(again.status == 0)
        #expect(again.stderrLines == ["aggregate: blog is already disabled"])
        let unknown = try await workspace.aggregate("enable", "nope")
        #expect(unknown.status == 2)
        #expect(unknown.stderrLines == ["aggregate: no source has the id nope (`aggregate sources` lists them); nothing was changed"])
        let flow = try await workspace.aggregate("disable", "flow")
        #expect(flow.status == 2)
        #expect(flow.stderrLines == [
            "aggregate: flow was not disabled: cannot change \(workspace.url.path)/Sources.yml: the entry flow is written on one line (flow style); change it in the file; it was left as it was",
        ])
        #expect(try workspace.read("Sources.yml") == Self.sourcesYml)
    }

    /// `serve` from nothing: the reader says how to add a feed, the feeds are empty.
    @Test func serveFromAnEmptyListAnswers() async throws {
        try await ServeTests.withServe(sources: []) { _, served in
            let page = try await ServeTests.get(served.base + "/", headers: [("Accept", "text/html")])
            #expect(page.status == 200)
            #expect(page.body.contains("No sources yet: add a feed with aggregate add URL, aggregate import FILE.opml, or an app&#39;s subscribe."))
            let atom = try await ServeTests.get(served.base + "/feed.atom")
            #expect(atom.status == 200)
            #expect(!atom.body.contains("<entry>"))
        }
    }

    /// `aggregate init` writes a commented feed list where `add` would make one; `--demo`
    /// the shipped demo, byte for byte; never over an existing file.
    @Test func initWritesAFileToStartFrom() async throws {
        let workspace = try Workspace()
        let environment = Self.environment(workspace)
        let made = "\(workspace.url.path)/config/aggregate/Sources.yml"
        let run = try await workspace.aggregate("init", environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderrLines == ["aggregate: wrote \(made); add feeds with `aggregate add URL` or `aggregate import FILE.opml`"])
        let text = try workspace.read("config/aggregate/Sources.yml")
        #expect(text.hasPrefix("# Sources for `aggregate`") && text.contains("#   plugin: feed\n"))
        #expect(try await workspace.aggregate("validate", environment: environment).status == 0)
        let again = try await workspace.aggregate("init", "--demo", environment: environment)
        #expect(again.status == 2)
        #expect(again.stderrLines == ["aggregate: \(made) already exists; nothing was written (`aggregate add URL` adds to it)"])
        #expect(try workspace.read("config/aggregate/Sources.yml") == text)

        let demo = try await workspace.aggregate("init", "--demo", "--config", "demo/Sources.yml")
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(try workspace.read("demo/Sources.yml") == (try Workspace.shippedSourcesYml))
        let offline = try await workspace.run("--config", "demo/Sources.yml", "--offline", "--format", "jsonl")
        #expect(offline.status == 0)
        #expect(offline.stdoutLines.count == 20)
    }
}
