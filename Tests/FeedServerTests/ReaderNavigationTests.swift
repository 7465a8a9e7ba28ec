import FeedConfig
import FeedCore
import FeedEngine
import FeedSourceTesting
import FixtureServer
import Foundation
import HTTPTypes
import SourceCatalogue
import Testing

/// The reader with many feeds (issue 61): the side list grouped by OPML folders with
/// their unread counts, the ungrouped last; one search field; "Oldest first".
@Suite struct ReaderNavigationTests {
    static let html: HTTPFields = [.accept: "text/html"]

    @Test func sixtyFeedsInThreeFoldersShowThreeGroups() async throws {
        let fixture = FixtureServer(upstreams: [FeedFarm(count: 61, entries: 2, vocabulary: 0)])
        try await fixture.withRunning { base in
            let folders = ["News", "Tech", "Friends"]
            var yaml = "sources:\n"
            for number in 0..<61 {
                yaml += "  - id: f\(number)\n    plugin: feed\n    url: \(base)/feeds/\(number).xml\n    timeout: 60\n    deadline: 300\n"
                // The last feed is in no folder.
                if number < 60 { yaml += "    options:\n      tags: [\"\(folders[number / 20])\"]\n" }
            }
            let config = try ConfigLoader(registry: SourceRegistry(SourceCatalogue.sources), environment: [:]).load(text: yaml, file: "Sources.yml")
            try await ServedInProcess.serve(config: config, state: .inMemory(), fixture: fixture, base: base) { served in
                await served.clock.untilSleeping(61)
                func groups(_ page: String) -> [String] {
                    page.matches(of: #/<details class="group"( open)?><summary>([^<]+) <span class="count">(\d+)</span></summary>/#)
                        .map { "\($0.output.2) \($0.output.3)\($0.output.1 == nil ? "" : " open")" }
                }
                // Each source records on its own: on a loaded machine the last may still be
                // writing, or a fetch may have timed out and wait for its next try.
                var page = try await served.get("/", headers: Self.html).text
                for attempt in 0..<100 where groups(page) != ["News 40", "Tech 40", "Friends 40"] {
                    if attempt % 20 == 19 { await served.refresh(after: 3600, sources: 61) }
                    try await Task.sleep(for: .milliseconds(100))
                    page = try await served.get("/", headers: Self.html).text
                }
                #expect(groups(page) == ["News 40", "Tech 40", "Friends 40"])
                #expect(page.contains(#"<li><a href="/?view=unread&amp;source=f0&amp;source=f1&amp;source=f2"#))
                // The ungrouped feed after the groups; its folder's group opens when it is shown.
                let ungrouped = try #require(page.range(of: #"<a href="/?view=unread&amp;source=f60">f60"#))
                #expect(page.range(of: "<summary>Friends")?.lowerBound ?? page.endIndex < ungrouped.lowerBound)
                let oneFeed = try await served.get("/?view=unread&source=f25", headers: Self.html).text
                #expect(oneFeed.contains(#"<details class="group" open><summary>Tech"#))
                // One search field: the header's.
                #expect(page.components(separatedBy: #"type="search""#).count == 2)
                // Oldest first: the same cards, the other way round. (Every copy apart: the
                // made-up feeds' titles come from one small vocabulary, one story to the reader.)
                let newest = ReadingServeTests.ids(try await served.get("/?view=all&sort=date&per_page=200&merge=off", headers: Self.html).text)
                let oldestPage = try await served.get("/?view=all&sort=oldest&per_page=200&merge=off", headers: Self.html).text
                #expect(ReadingServeTests.ids(oldestPage) == newest.reversed())
                #expect(newest.count == 122)
                #expect(oldestPage.contains(#"<option value="oldest" selected>Oldest first</option>"#))
            }
        }
    }
}
