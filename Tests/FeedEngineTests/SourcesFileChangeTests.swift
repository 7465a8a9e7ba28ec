import FeedConfig
import FeedCore
import Foundation
import Testing

/// Removing and replacing one entry of Sources.yml (the Google Reader API's unsubscribe
/// and rename): exactly that entry's lines change, comments and the rest stay, and an
/// entry with settings the writer cannot write is left to be changed by hand.
@Suite struct SourcesFileChangeTests {
    static let file = """
        # my feeds
        feed:
          title: Mine

        sources:
          - id: blog   # added by hand
            plugin: feed
            url: https://example.com/blog.xml
            cache_ttl: 60

          # the news
          - id: news
            name: "The News"
            plugin: feed
            url: "https://example.com/news.xml"
            options:
              tags: ["Daily"]
        # digests below
        digests:
          - name: daily
        """

    @Test func removingTheLastEntryKeepsTheCommentsAndKeysAfterIt() throws {
        let updated = try SourcesFileEdit.removing("news", from: Self.file, file: "Sources.yml")
        #expect(updated == """
            # my feeds
            feed:
              title: Mine

            sources:
              - id: blog   # added by hand
                plugin: feed
                url: https://example.com/blog.xml
                cache_ttl: 60

              # the news
            # digests below
            digests:
              - name: daily
            """)
    }

    @Test func removingAnEntryLeavesTheCommentAboveTheNextOne() throws {
        let updated = try SourcesFileEdit.removing("blog", from: Self.file, file: "Sources.yml")
        #expect(updated.contains("sources:\n\n  # the news\n  - id: news\n"), "\(updated)")
        #expect(!updated.contains("blog"))
    }

    @Test func replacingAWrittenEntryRenamesAndRefilesItInItsPlace() throws {
        let entry = NewSourceEntry(id: "news", name: "Morning \"News\"", plugin: "feed", url: URL(string: "https://example.com/news.xml")!, tags: ["Daily", "World"])
        let updated = try SourcesFileEdit.replacing("news", with: entry, in: Self.file, file: "Sources.yml")
        #expect(updated.contains("""
              # the news
              - id: news
                name: "Morning \\"News\\""
                plugin: feed
                url: "https://example.com/news.xml"
                options:
                  tags: ["Daily", "World"]
            # digests below
            """), "\(updated)")
    }

    @Test func anEntryWithOtherSettingsIsNotReplaced() throws {
        let entry = NewSourceEntry(id: "blog", name: "Blog", plugin: "feed", url: URL(string: "https://example.com/blog.xml")!)
        #expect(throws: SourcesFileEdit.Failure.self) { try SourcesFileEdit.replacing("blog", with: entry, in: Self.file, file: "Sources.yml") }
        do {
            _ = try SourcesFileEdit.replacing("blog", with: entry, in: Self.file, file: "Sources.yml")
        } catch {
            #expect(error.description == "the entry blog has settings besides id, name, plugin, url and tags; change it in the file")
        }
    }

    @Test func anUnknownIDOrAFlowListChangesNothing() {
        do {
            _ = try SourcesFileEdit.removing("podcast", from: Self.file, file: "Sources.yml")
            Issue.record("removed an entry that is not there")
        } catch {
            #expect(error.description == "it has no source with the id podcast")
        }
        do {
            _ = try SourcesFileEdit.removing("a", from: "sources: [{id: a, plugin: feed, url: 'https://a.example/'}]\n", file: "Sources.yml")
            Issue.record("removed from a flow list")
        } catch {
            #expect(error.description == "its sources: list is written on one line (flow style); remove a by hand")
        }
    }
}
