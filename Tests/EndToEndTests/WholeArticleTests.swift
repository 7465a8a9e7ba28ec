import FeedSourceTesting
import FixtureKit
import Foundation
import Testing

/// `full_content:` through the built binary (issue 63): a feed that only teases, its whole
/// articles on the fixture server's `/page/article/…`. Each new card's link is fetched
/// once; the next run fetches none and prints the same cards; an article that is gone
/// leaves its card the feed's own text and is said on stderr and in `/healthz`; a link to a
/// private address elsewhere than the feed's own host is never fetched.
@Suite(.serialized) struct WholeArticleTests {
    static func teasers(_ fullContent: String, picked: Bool = false) -> FixtureSourceEntry {
        FixtureSourceEntry(id: "teasers", plugin: "feed", path: "/feed/teasers.xml" + (picked ? "?picked=1" : ""), route: "feed",
                           extraYAML: "    full_content: \(fullContent)\n")
    }

    /// The run's cards as JSON lines, the fixture server's address written `BASE`.
    static func lines(_ run: Binary.Run, base: URL) -> [String] {
        let base = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        return run.stdoutLines.map { $0.replacingOccurrences(of: base, with: "BASE") }
    }

    /// A `--stored` line without the store's `first_seen` and `last_seen`.
    static func withoutStoreDates(_ line: String) -> String {
        line.replacingOccurrences(of: #""(first|last)_seen":"[^"]*","#, with: "", options: .regularExpression)
    }

    /// The article pages the fixture server was asked for, in order of path.
    static func articleRequests(_ session: FixtureSession) -> [String] {
        session.requests.map(\.path).filter { $0.hasPrefix("/page/article/") }.sorted()
    }

    static let autoCards = [
        #"{"details":{"content":"<p>Work on the north quay starts on Monday and lasts until the spring, the harbour office said.</p><p>Ferries keep to their timetable; the fish market moves to the old customs shed for the winter, with stalls open from six in the morning &lt;daily&gt;.</p>"},"id":"teasers:urn:teaser:t1","kind":"post","published":"2026-11-20T08:00:00Z","source":"teasers","summary":"Teaser of Harbour works begin.","tags":[],"title":"Harbour works begin","url":"BASE/page/article/ld.html","v":1}"#,
        #"{"details":{"content":"<h1>The new ferry is named</h1>\n<p>After a vote in every school of the island, the new ferry will be called <em>Northern Light</em>.</p>\n<p>She enters service in March and carries <a href=\"BASE/ferries/northern-light\" rel=\"noopener noreferrer nofollow\">twice as many cars</a> as the old one, the shipping company said on Tuesday, and her crossing takes twenty minutes less.</p>"},"id":"teasers:urn:teaser:t2","kind":"post","published":"2026-11-21T08:00:00Z","source":"teasers","summary":"Teaser of The new ferry is named.","tags":[],"title":"The new ferry is named","url":"BASE/page/article/tag.html","v":1}"#,
        #"{"details":{"content":"<h2>A winter of storms</h2>\n<p>Forecasters expect more storms than usual this winter, and the council has put sandbags by the harbour wall.</p>\n<p>Residents of the lower town are asked to keep drains clear and to sign up for the flood warnings by text message.</p>"},"id":"teasers:urn:teaser:t3","kind":"post","published":"2026-11-22T08:00:00Z","source":"teasers","summary":"Teaser of A winter of storms.","tags":[],"title":"A winter of storms","url":"BASE/page/article/dense.html","v":1}"#,
        #"{"id":"teasers:urn:teaser:t4","kind":"post","published":"2026-11-23T08:00:00Z","source":"teasers","summary":"Teaser of An article taken down.","tags":[],"title":"An article taken down","url":"BASE/page/article/gone.html","v":1}"#,
        #"{"id":"teasers:urn:teaser:t5","kind":"post","published":"2026-11-24T08:00:00Z","source":"teasers","summary":"Teaser of The router's admin page.","tags":[],"title":"The router's admin page","url":"http://10.0.0.1/admin","v":1}"#,
    ]

    @Test func eachNewCardsArticleIsFetchedOnceAndKept() async throws {
        try await FixtureWorld.withSession(sources: [Self.teasers("auto")]) { session in
            // Unrecorded, every card is new each run. The private address is refused before
            // any connection (it is no fixture's), and `--verbose` names each failure.
            let unrecorded = try await session.run("--format", "jsonl", "--sort", "feed", "--no-record", "--verbose")
            #expect(Self.lines(unrecorded, base: session.base) == Self.autoCards)
            #expect(unrecorded.stderrLines.contains("teasers: whole article not read: the address is not a public one (http://10.0.0.1/admin)"), "\(unrecorded.stderr)")
            #expect(unrecorded.stderrLines.contains("teasers: 3 whole articles fetched"), "\(unrecorded.stderr)")

            session.clearLog()
            let first = try await session.run("--format", "jsonl", "--sort", "feed", "--refresh")
            #expect(Self.lines(first, base: session.base) == Self.autoCards)
            #expect(first.status == 0)
            #expect(first.stderrLines.map { $0.replacingOccurrences(of: session.base.absoluteString, with: "BASE") } == [
                "teasers: 2 of 5 whole articles could not be read; their cards keep the source's own text: HTTP 404 (BASE/page/article/gone.html)",
            ], "\(first.stderr)")
            #expect(Self.articleRequests(session) == ["/page/article/dense.html", "/page/article/gone.html", "/page/article/ld.html", "/page/article/tag.html"])

            // The next run, past the cache: the feed is read again, no article is.
            session.clearLog()
            let second = try await session.run("--format", "jsonl", "--sort", "feed", "--refresh")
            #expect(Self.lines(second, base: session.base) == Self.autoCards)
            #expect(second.status == 0 && second.stderr.isEmpty, "\(second.stderr)")
            #expect(session.requests.map(\.path) == ["/feed/teasers.xml"])
            // The store keeps each card as the first run made it, article and all.
            let stored = try await session.run("--stored", "--format", "jsonl", "--sort", "feed")
            #expect(Self.lines(stored, base: session.base).map(Self.withoutStoreDates) == Self.autoCards)
        }
    }

    @Test func aSelectorPicksTheArticleOutOfItsPage() async throws {
        try await FixtureWorld.withSession(sources: [Self.teasers(#"{selector: ".entry-content"}"#, picked: true)]) { session in
            let run = try await session.run("--format", "jsonl", "--sort", "feed", "--no-record")
            #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
            #expect(Self.lines(run, base: session.base).map { line in
                ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]).flatMap { ($0["details"] as? [String: Any])?["content"] as? String }
            } == ["<p>The whole of picked post 1.</p>", "<p>The whole of picked post 2.</p>"])
        }
    }

    @Test func aWrongSettingIsAConfigErrorAtItsPlace() async throws {
        try await FixtureWorld.withSession(sources: [Self.teasers(#"{selector: "div..x"}"#), ]) { session in
            let run = try await session.run("--format", "jsonl")
            #expect(run.status == 2)
            #expect(run.stderrLines.first?.hasPrefix(#"Sources.yml:6:35: sources[0].full_content.selector: "div..x" "#) == true, "\(run.stderr)")
        }
        try await FixtureWorld.withSession(sources: [Self.teasers("maybe")]) { session in
            let run = try await session.run("--format", "jsonl")
            #expect(run.status == 2)
            #expect(run.stderrLines == [#"Sources.yml:6:19: sources[0].full_content: expected auto or a mapping with selector: (full_content: {selector: "article .entry"}), got text "maybe""#], "\(run.stderr)")
        }
    }

    /// `serve`'s background refresh fetches the articles; `/healthz` says which could not be read.
    @Test func serveSaysInHealthWhichArticlesFailed() async throws {
        try await ServeTests.withServe(sources: [Self.teasers("auto")]) { session, served in
            var health = ""
            for _ in 0..<100 {
                health = try await ServeTests.get(served.base + "/healthz").body
                if health.contains("articles") { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(health.contains(#""articles":"2 of 5 whole articles could not be read; their cards keep the source's own text: HTTP 404 ("#), "\(health)")
            let feed = try await ServeTests.get(served.base + "/feed.json")
            #expect(feed.body.contains("Northern Light"))
        }
    }
}
