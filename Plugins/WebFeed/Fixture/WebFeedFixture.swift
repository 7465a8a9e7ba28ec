import FeedCore
import FixtureKit
import Foundation
import WebFeed

/// Feeds on `/feed/…`: the three snapshots (served with the wrong content types real
/// servers use), an HTML page that advertises two of them, one that advertises the
/// podcast, one that advertises nothing, and an RFC 5005 archive of three
/// pages (`/feed/archive.xml?page=N`), and `/feed/teasers.xml`: posts that only tease, their
/// whole articles on the fixture's `/page/article/…` (`?picked=1`: ones for a selector).
public struct WebFeedFixture: FixtureUpstream {
    public let name = "feed"

    public func respond(to request: FixtureRequest) -> FixtureResponse? {
        switch request.path {
        case "/blog.atom.xml": return Self.body(WebFeedSource.snapshots[0].body, type: "application/octet-stream")
        case "/news.rss.xml": return Self.body(WebFeedSource.snapshots[1].body, type: "text/html; charset=utf-8")
        case "/podcast.xml": return Self.body(WebFeedSource.snapshots[2].body, type: "application/rss+xml")
        case "/page.html": return Self.body(Data(Self.page.utf8), type: "text/html; charset=utf-8")
        case "/show.html": return Self.body(Data(Self.showPage.utf8), type: "text/html; charset=utf-8")
        case "/about.html": return Self.body(Data(Self.plainPage.utf8), type: "text/html; charset=utf-8")
        case "/same-a.xml": return Self.body(Data(Self.sameStories(second: false).utf8), type: "application/atom+xml")
        case "/same-b.xml": return Self.body(Data(Self.sameStories(second: true).utf8), type: "application/atom+xml")
        case "/teasers.xml": return Self.body(Data(Self.teasers(picked: request.query["picked"] == "1").utf8), type: "application/atom+xml")
        case "/archive.xml":
            let page = request.query["page"].flatMap { Int($0) } ?? 1
            return (1...3).contains(page) ? Self.body(Data(Self.archive(page).utf8), type: "application/atom+xml") : nil
        default: return nil
        }
    }

    static func body(_ data: Data, type: String) -> FixtureResponse {
        FixtureResponse(status: 200, contentType: type, body: data)
    }

    static let page = """
        <!DOCTYPE html>
        <html><head><title>Harbour City Herald</title>
        <link rel="alternate" type="application/rss+xml" title="Top stories" href="/feed/news.rss.xml">
        <link rel="alternate" type="application/atom+xml" href="blog.atom.xml">
        </head><body><p>News</p></body></html>
        """

    /// A podcast's page that advertises its one feed (and a hostile link that is no feed).
    static let showPage = """
        <!doctype html>
        <html><head><title>Kitchen Radio</title>
        <link rel="alternate" type="application/rss+xml" title="Kitchen Radio &#x1b;[31m(MP3)" href="podcast.xml">
        <link rel="alternate" type="application/rss+xml" title="Run me" href="javascript:alert(1)">
        </head><body><p>Episodes</p></body></html>
        """

    /// Five posts that only tease, linking (relative to the feed) to the whole articles: by
    /// JSON-LD, by `<article>`, by the densest block, one that is gone (404), and one on a
    /// private address (which no article fetch may reach). Picked:
    /// two posts whose articles a selector finds.
    static func teasers(picked: Bool) -> String {
        let posts = picked
            ? [("p1", "First picked post", "/page/article/entry.html?n=1"), ("p2", "Second picked post", "/page/article/entry.html?n=2")]
            : [("t1", "Harbour works begin", "/page/article/ld.html"), ("t2", "The new ferry is named", "/page/article/tag.html"),
               ("t3", "A winter of storms", "/page/article/dense.html"), ("t4", "An article taken down", "/page/article/gone.html"),
               ("t5", "The router's admin page", "http://10.0.0.1/admin")]
        let entries = posts.enumerated().map { index, post in
            """
            <entry><title>\(post.1)</title><id>urn:teaser:\(post.0)</id><link href="\(post.2)"/>\
            <updated>2026-11-2\(index)T08:00:00Z</updated><summary>Teaser of \(post.1).</summary></entry>
            """
        }
        return "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>Teasers</title><id>urn:teasers</id>"
            + "<updated>2026-11-24T08:00:00Z</updated>\n" + entries.joined(separator: "\n") + "\n</feed>\n"
    }

    /// Two news feeds (`/feed/same-a.xml`, `/feed/same-b.xml`) for `merge: same-item`: both
    /// link one story (the second with tracking parameters), and each has a headline the
    /// other nearly has ("iOS 18.1 released…" and "iOS 18.2 released…": not one story).
    static func sameStories(second: Bool) -> String {
        let story = "https://herald.example/2026/11/harbour-works" + (second ? "?utm_source=rss&utm_medium=feed" : "")
        let (version, day) = second ? ("18.2", "21") : ("18.1", "20")
        return """
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom"><title>\(second ? "Tech digest" : "Harbour news")</title><id>urn:same:\(second)</id>
            <updated>2026-11-22T08:00:00Z</updated>
            <entry><title>\(second ? "Harbour works begin on Monday" : "Harbour works begin")</title><id>urn:same:\(second ? "b" : "a"):1</id>\
            <link href="\(story)"/><updated>2026-11-2\(second ? "2" : "1")T08:00:00Z</updated></entry>
            <entry><title>iOS \(version) released with Apple Intelligence features</title><id>urn:same:\(second ? "b" : "a"):2</id>\
            <link href="https://\(second ? "b" : "a").example/ios"/><updated>2026-11-\(day)T09:00:00Z</updated></entry>
            </feed>
            """
    }

    /// A page that names no feed.
    static let plainPage = "<!DOCTYPE html><html><head><title>About</title></head><body><p>Nothing to subscribe to.</p></body></html>"

    /// Page `number` of a three-page Atom archive, two entries each.
    static func archive(_ number: Int) -> String {
        let next = number < 3 ? #"<link rel="next" href="archive.xml?page=\#(number + 1)"/>"# : ""
        let entries = (1...2).map { index in
            let id = (number - 1) * 2 + index
            return """
                <entry><title>Archived post \(id)</title><id>urn:archive:\(id)</id>\
                <link href="https://blog.example.org/archive/\(id)"/><updated>2026-0\(number)-1\(index)T10:00:00Z</updated></entry>
                """
        }.joined()
        return #"<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Archive</title><id>urn:archive</id>"#
            + next + entries + "</feed>"
    }
}

extension WebFeedSource: BuiltinSource {
    public static func fixture(_ options: FixtureOptions) -> any FixtureUpstream {
        WebFeedFixture()
    }

    public static let fixtureSources = [
        FixtureSourceEntry(id: "feed-blog", plugin: plugin, path: "/feed/blog.atom.xml", route: "feed", extraYAML: "    enabled: false\n"),
        FixtureSourceEntry(id: "feed-news", plugin: plugin, path: "/feed/news.rss.xml", route: "feed", extraYAML: "    enabled: false\n"),
        FixtureSourceEntry(id: "feed-podcast", plugin: plugin, path: "/feed/podcast.xml", route: "feed", extraYAML: "    enabled: false\n"),
        FixtureSourceEntry(id: "feed-archive", plugin: plugin, path: "/feed/archive.xml", route: "feed", extraYAML: "    enabled: false\n"),
    ]
}
