import FeedConfig
import FeedCore
import FeedSupport
import FeedEngine
import FeedSourceTesting
import Foundation
import Testing
@testable import WebFeed

@Suite struct WebFeedTests {
    static func source(_ url: String, body: Data, options: String? = nil) throws -> WebFeedSource {
        let yaml = "sources:\n  - id: f\n    plugin: feed\n    url: \(url)\n" + (options.map { "    options:\n" + $0 } ?? "")
        let config = try ConfigLoader(registry: SourceRegistry([WebFeedSource.self]), environment: [:]).load(text: yaml, file: "Sources.yml")
        return try WebFeedSource(settings: config.sources[0].settings, http: RecordedUpstream(bodies: [url: body]))
    }

    static func page(_ snapshot: Int) async throws -> SourcePage {
        let recorded = WebFeedSource.snapshots[snapshot]
        return try await source(recorded.url, body: recorded.body).page(after: nil)
    }

    static func date(_ text: String) -> Date? { FeedDates.date(text) }

    @Test func theAtomBlogMapsToExactCards() async throws {
        let page = try await Self.page(0)
        #expect(page.next == nil)
        #expect(page.cards.count == 5)
        let first = page.cards[0]
        #expect(first.id == "f:tag:blog.example.org,2026:posts/incremental-builds-measured")
        #expect(first.title == "Incremental builds, measured")
        #expect(first.url?.absoluteString == "https://blog.example.org/posts/incremental-builds-measured")
        #expect(first.summary == "We timed 400 incremental builds on two machines. The median tells one story; the tail tells another.")
        #expect(first.image?.absoluteString == "https://blog.example.org/img/incremental-histogram.png")
        #expect(first.author?.name == "Mira Castellanos")
        #expect(first.published == Self.date("2026-11-20T09:15:00Z"))
        #expect(first.tags == ["builds", "performance"])
        #expect(first.kind == .post)
        // A zone is read and the date written in UTC; a plain-text summary is taken as written.
        #expect(page.cards[1].published == Self.date("2026-11-09T12:30:00Z"))
        #expect(page.cards[1].summary == "A weekly dependency bump, a cache key that includes the lock file, and a 40-minute cold build every Monday morning.")
        // XHTML title and content; only `updated`; the entry's own author; replies link.
        let third = page.cards[2]
        #expect(third.title == "Linker flags & -dead_strip")
        #expect(third.summary == "What dead stripping removes, and what it cannot.")
        #expect(third.published == Self.date("2026-10-28T16:45:12Z"))
        #expect(third.author?.name == "Tomás Oyelaran")
        #expect(third.details["comments"] == "https://blog.example.org/posts/linker-flags#comments")
        // An image enclosure is the image.
        #expect(page.cards[4].image?.absoluteString == "https://blog.example.org/img/flaky-year.png")
    }

    @Test func theNewsRSSMapsToExactCards() async throws {
        let page = try await Self.page(1)
        #expect(page.cards.map(\.upstreamID) == [
            "https://news.example.com/local/ferry-timetable-changes-68231", "herald-68229",
            "https://news.example.com/weather/storm-warning-68220", "https://news.example.com/sport/derby-report-68214",
            "https://news.example.com/local/library-hours-68201", "https://news.example.com/business/fish-market-68190",
        ])
        #expect(page.cards[0].image?.absoluteString == "https://images.news.example.com/240/ferry-68231.jpg")
        #expect(page.cards[1].summary == "The £4.2m scheme will begin in spring, the council said.")
        #expect(page.cards[1].tags == ["Local", "Politics"])
        #expect(page.cards[2].author?.name == "Weather desk")
        #expect(page.cards[2].image?.absoluteString == "https://images.news.example.com/976/storm-68220.jpg")
        #expect(page.cards[3].title == "Harbour City 2 – 1 Westbay Rovers")
        // No seconds in the date.
        #expect(page.cards[4].published == Self.date("2026-11-21T11:30:00Z"))
        #expect(page.cards[4].image == nil)
    }

    @Test func thePodcastMapsToExactCards() async throws {
        let page = try await Self.page(2)
        #expect(page.cards.count == 4)
        let episode = page.cards[0]
        #expect(episode.id == "f:small-batch-112")
        #expect(episode.url == nil)
        #expect(episode.summary == "Ada Brennan on keeping a 1920s press running.")
        #expect(episode.author?.name == "Priya Natarajan")
        #expect(episode.image?.absoluteString == "https://podcast.example.net/episodes/112.jpg")
        #expect(episode.details["enclosures"] == [["length": 48_210_934, "type": "audio/mpeg", "url": "https://cdn.podcast.example.net/episodes/112.mp3"]])
        #expect(episode.details["content"]?.stringValue?.hasPrefix("<p>Ada Brennan") == true)
        #expect(page.cards[1].author?.name == "Priya Natarajan and Sol Reyes")
    }

    /// Most feeds put the whole post in the RSS description or the Atom summary: it is the
    /// card's body (sanitized), unless the summary already says all of it.
    @Test func aDescriptionWithMarkupOrMoreThanTheSummaryIsTheBody() async throws {
        let rss = """
            <rss version="2.0"><channel><title>T</title>
            <item><guid>rich</guid><title>Rich</title><description>&lt;p&gt;One &lt;strong&gt;bold&lt;/strong&gt; claim.&lt;/p&gt;&lt;ul&gt;&lt;li&gt;a&lt;/li&gt;&lt;/ul&gt;&lt;script&gt;x()&lt;/script&gt;</description></item>
            <item><guid>plain</guid><title>Plain</title><description>Short and plain &amp; whole.</description></item>
            <item><guid>long</guid><title>Long</title><description>\(String(repeating: "word ", count: 20))end</description></item>
            <item><guid>both</guid><title>Both</title><description>&lt;p&gt;Teaser&lt;/p&gt;</description><content:encoded xmlns:content="http://purl.org/rss/1.0/modules/content/">&lt;p&gt;Whole&lt;/p&gt;</content:encoded></item>
            </channel></rss>
            """
        let source = try Self.source("https://blog.example.org/feed.xml", body: Data(rss.utf8), options: "      summary_length: 40\n")
        let cards = try await source.page(after: nil).cards
        #expect(cards.map { $0.details["content"]?.stringValue } == [
            "<p>One <strong>bold</strong> claim.</p><ul><li>a</li></ul>",
            nil,
            "\(String(repeating: "word ", count: 20))end",
            "<p>Whole</p>",
        ])
        #expect(cards[1].summary == "Short and plain & whole.")
        #expect(cards[2].summary == "word word word word word word word word…")
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><id>urn:t</id>
            <entry><id>urn:e</id><title>E</title><summary type="html">&lt;p&gt;A &lt;em&gt;summary&lt;/em&gt;&lt;/p&gt;</summary></entry></feed>
            """
        let entry = try await Self.source("https://blog.example.org/atom.xml", body: Data(atom.utf8)).page(after: nil).cards[0]
        #expect(entry.details["content"] == "<p>A <em>summary</em></p>")
    }

    @Test func optionsShapeEveryCard() async throws {
        let recorded = WebFeedSource.snapshots[1]
        let source = try Self.source(recorded.url, body: recorded.body, options: "      kind: item\n      summary_length: 40\n      tags: [news, local]\n")
        let card = try await source.page(after: nil).cards[0]
        #expect(card.kind == .item)
        #expect(card.summary == "Two evening crossings are cut and a new…")
        #expect(card.tags == ["Local", "news", "local"])
    }

    @Test func textHelpersWorkOnBytesAsOnCharacters() {
        #expect(HTMLText.trimmed("\u{00A0} a b \n") == "a b")
        #expect(HTMLText.trimmed("x") == "x")
        #expect(HTMLText.trimmed(" \u{3000}") == "")
        #expect(HTMLText.trimmed("\tCafé\u{2003}") == "Café")
        #expect(HTMLText.collapse(" a\u{00A0}\u{00A0}b\n\tc ") == "a b c")
        #expect(HTMLText.plain("<p>Caf&eacute; <b>au</b>  lait</p><script>x()</script><p>next</p>") == "Café au lait next")
        #expect(HTMLText.plain("<b>Bold</b>ly &amp; 1 &lt; 2") == "Boldly & 1 < 2")
        #expect(HTMLText.cut("one two three four", to: 12) == "one two…")
        #expect(HTMLText.firstImage(#"<p><IMG alt="x" src="/a.png"></p>"#) == "/a.png")
        #expect(HTMLText.firstImage("<p><image src=x></p>") == nil)
    }

    /// A summary reads only the start of a long article, and must cut it exactly as the
    /// whole text would be cut: in ASCII, in four-byte characters, and in long clusters.
    @Test(arguments: ["word ", "<p>Caf&eacute; &mdash;</p> ", "😀😀 ", "e\u{301}\u{301}\u{301}\u{301}\u{301} "])
    func aSummaryReadInPartIsCutAsTheWholeText(_ piece: String) {
        let html = String(repeating: piece, count: 2_000) + "<script>never()</script>"
        for limit in [40, 280, 1_000] {
            #expect(HTMLText.cut(HTMLText.plain(html, atLeast: limit), to: limit) == HTMLText.cut(HTMLText.plain(html), to: limit))
        }
        #expect(HTMLText.plain("<p>short &amp; sweet</p>", atLeast: 280) == "short & sweet")
    }

    /// Cutting counts characters from the bytes while every scalar stands alone: it must
    /// agree with Swift's grapheme clusters at every length, on text mixing those scalars
    /// with the ones that join (combining marks, joiners, emoji modifiers, CR LF, Hangul).
    @Test func cuttingCountsCharactersAsGraphemeClusters() {
        let pieces = ["word", " ", "—", "“quoted”", "€5", "e\u{301}", "👍🏽", "👨\u{200D}👩\u{200D}👧", "\r\n", "한국어", "a\u{20DD}",
                      "\u{2060}", "é", "ǅ", "x\u{200C}y", "a\u{200D}b", "…", ",", "🇫🇷"]
        func reference(_ text: String, _ limit: Int) -> String {
            guard text.count > limit else { return text }
            var head = text.prefix(limit)
            if let space = head.lastIndex(of: " ") { head = head[..<space] }
            while let last = head.unicodeScalars.last, last == " " || CharacterSet.punctuationCharacters.contains(last) {
                head = head.dropLast()
            }
            return head + "…"
        }
        var seed: UInt64 = 42
        for _ in 0..<300 {
            var text = ""
            for _ in 0..<12 {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text += pieces[Int(seed >> 33) % pieces.count]
            }
            for limit in 1...(text.count + 1) {
                #expect(HTMLText.cut(text, to: limit) == reference(text, limit), "\(text.debugDescription) at \(limit)")
                #expect(HTMLText.isLonger(text, than: limit) == (text.count > limit), "\(text.debugDescription) at \(limit)")
            }
        }
    }

    /// What `aggregate add` is told about a URL's answer: a feed and its title, a page's
    /// advertised feeds (web addresses only, resolved, each once), or why neither.
    @Test func discoverTellsAFeedFromAPageThatAdvertisesFeeds() {
        let page = URL(string: "https://news.example.com/section/")!
        func discover(_ body: String, url: URL = page) -> FeedDiscovery {
            WebFeedSource.discover(HTTPResponse(status: 200, body: Data(body.utf8), url: url), json: JSONBody(environment: [:]))
        }
        #expect(discover(String(decoding: WebFeedSource.snapshots[1].body, as: UTF8.self)) == .feed(title: "Harbour City Herald - Top Stories"))
        let html = """
            <!DOCTYPE html><html><head>
            <link rel="alternate" type="application/rss+xml" title="Top &amp; latest" href="../rss.xml">
            <LINK REL="Alternate" TYPE="application/atom+xml" href="https://news.example.com/atom.xml">
            <link rel="alternate" type="application/rss+xml" href="javascript:alert(1)">
            <link rel="alternate" type="application/rss+xml" href="data:text/xml,<rss/>">
            <link rel="alternate" type="application/rss+xml" title="again" href="/rss.xml">
            <link rel="stylesheet" type="text/css" href="/site.css">
            <link rel="alternate" type="text/html" hreflang="fr" href="/fr/">
            </head></html>
            """
        #expect(discover(html) == .page([
            AdvertisedFeed(url: URL(string: "https://news.example.com/rss.xml")!, title: "Top & latest"),
            AdvertisedFeed(url: URL(string: "https://news.example.com/atom.xml")!),
        ]))
        #expect(discover("<!doctype html><html><body>hello</body></html>")
            == .neither("it is a web page that names no feed (no <link rel=\"alternate\"> to RSS, Atom or JSON Feed)"))
        #expect(discover(#"{"products": []}"#) == .neither("the body is not a feed (neither XML nor a JSON Feed)"))
        #expect(discover("<svg xmlns='http://www.w3.org/2000/svg'/>") == .neither("not a feed: the document is <svg>, where RSS, RDF or Atom was expected"))
        // A page cannot make the list long.
        let many = "<html><head>" + (0..<100).map { #"<link rel="alternate" type="application/rss+xml" href="/f\#($0).xml">"# }.joined() + "</head></html>"
        guard case .page(let feeds) = discover(many) else { Issue.record("not a page"); return }
        #expect(feeds.count == 20)
    }
}
