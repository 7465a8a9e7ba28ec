import FeedSourceTesting
import Foundation
import Testing

/// `aggregate remove ID…` (issue 61): entries out of Sources.yml through the checked
/// whole-file edit; nothing removed when an id is unknown or the file would not load.
@Suite struct RemoveTests {
    static let sourcesYml = """
        # My feeds
        sources:
          - id: news          # the local paper
            plugin: feed
            url: https://news.example.com/rss.xml

          # A blog I keep for now.
          - id: blog
            plugin: feed
            url: https://blog.example.org/atom.xml
            cache_ttl: 600

          - id: tech
            plugin: feed
            url: https://tech.example.net/feed

        digests:
          - name: daily
            sources: [news]

        """

    @Test func removedEntriesLeaveTheRestOfTheFileAsItWas() async throws {
        let workspace = try Workspace(sourcesYml: Self.sourcesYml)
        let unknown = try await workspace.aggregate("remove", "blog", "nope", "gone")
        #expect(unknown.status == 2)
        #expect(unknown.stderrLines == ["aggregate: no sources have the ids nope, gone (`aggregate sources` lists them); nothing was removed"])
        #expect(try workspace.read("Sources.yml") == Self.sourcesYml)

        // A digest names news: the file would not load without it.
        let named = try await workspace.aggregate("remove", "news")
        #expect(named.status == 2)
        #expect(named.stderrLines.first?.hasPrefix("aggregate: news was not removed: ") == true, "\(named.stderr)")
        #expect(try workspace.read("Sources.yml") == Self.sourcesYml)

        let run = try await workspace.aggregate("remove", "blog", "tech", "blog")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderrLines == ["aggregate: removed blog from Sources.yml", "aggregate: removed tech from Sources.yml"])
        // An entry's lines go; a comment above it stays (comments just above an entry are
        // kept with the text before it, as every edit of the file keeps them).
        #expect(try workspace.read("Sources.yml") == """
            # My feeds
            sources:
              - id: news          # the local paper
                plugin: feed
                url: https://news.example.com/rss.xml

              # A blog I keep for now.


            digests:
              - name: daily
                sources: [news]

            """)
        #expect(try await workspace.aggregate("validate").status == 0)
    }
}
