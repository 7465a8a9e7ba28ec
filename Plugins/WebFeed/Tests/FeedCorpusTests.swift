@testable import WebFeed
import FeedCore
import Foundation
import Testing

/// The corpus: feed documents in every format with the quirks real feeds have, each with
/// the cards it must give (id, title, url, date at least). Built here rather than kept as
/// files: each group below says where its cases come from, and every document is written
/// out whole by the builders, so a failure shows the exact text.
@Suite struct FeedCorpusTests {
    /// One document and what it must give.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var body: Data
        var url = "https://feeds.example.org/feed"
        var expected: Expected
        var testDescription: String { name }
    }

    enum Expected: Sendable {
        case cards([Want])
        /// The source fails with a message containing this.
        case failure(String)
    }

    /// What one card must be: `nil` fields are not checked, `.some(nil)` must be absent.
    struct Want: Sendable {
        var id: String?
        var title: String?
        var url: String??
        var date: String??
        var image: String??
        var author: String??
        var tags: [String]?
    }

    // MARK: Builders

    struct Item {
        var title: String? = "Entry"
        var id: String? = "urn:entry:1"
        var link: String? = "https://example.org/entry/1"
        var date: String?
        var extra = ""
    }

    static func rss2(_ items: [Item], channelExtra: String = "", declaration: String = #"<?xml version="1.0" encoding="UTF-8"?>"#,
                     namespaces: String = "") -> String {
        let body = items.map { item in
            "<item>" + (item.title.map { "<title>\($0)</title>" } ?? "") + (item.link.map { "<link>\($0)</link>" } ?? "")
                + (item.id.map { #"<guid isPermaLink="false">\#($0)</guid>"# } ?? "")
                + (item.date.map { "<pubDate>\($0)</pubDate>" } ?? "") + item.extra + "</item>"
        }.joined(separator: "\n")
        return declaration + "\n" + #"<rss version="2.0" \#(namespaces)><channel><title>Feed</title><link>https://example.org/</link>"#
            + channelExtra + "\n" + body + "\n</channel></rss>\n"
    }

    static func rss1(_ items: [Item], declaration: String = #"<?xml version="1.0" encoding="UTF-8"?>"#) -> String {
        let body = items.map { item in
            #"<item rdf:about="\#(item.id ?? item.link ?? "")">"# + (item.title.map { "<title>\($0)</title>" } ?? "")
                + (item.link.map { "<link>\($0)</link>" } ?? "") + (item.date.map { "<dc:date>\($0)</dc:date>" } ?? "")
                + item.extra + "</item>"
        }.joined(separator: "\n")
        return declaration + "\n"
            + #"<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">"#
            + #"<channel rdf:about="https://example.org/"><title>Feed</title><link>https://example.org/</link></channel>"#
            + "\n" + body + "\n</rdf:RDF>\n"
    }

    static func atom(_ items: [Item], dateElement: String = "published", titleType: String? = "html",
                     declaration: String = #"<?xml version="1.0" encoding="UTF-8"?>"#, feedExtra: String = "") -> String {
        let body = items.map { item in
            "<entry>" + (item.title.map { "<title\(titleType.map { #" type="\#($0)""# } ?? "")>\($0)</title>" } ?? "")
                + (item.link.map { #"<link href="\#($0)"/>"# } ?? "") + (item.id.map { "<id>\($0)</id>" } ?? "")
                + (item.date.map { "<\(dateElement)>\($0)</\(dateElement)>" } ?? "") + item.extra + "</entry>"
        }.joined(separator: "\n")
        return declaration + "\n" + #"<feed xmlns="http://www.w3.org/2005/Atom"><title>Feed</title><id>urn:feed</id>"# + feedExtra
            + "\n" + body + "\n</feed>\n"
    }

    static func atom03(_ items: [Item]) -> String {
        let body = items.map { item in
            #"<entry><title mode="escaped">\#(item.title ?? "")</title><link rel="alternate" type="text/html" href="\#(item.link ?? "")"/>"#
                + "<id>\(item.id ?? "")</id>" + (item.date.map { "<issued>\($0)</issued><modified>\($0)</modified>" } ?? "")
                + item.extra + "</entry>"
        }.joined(separator: "\n")
        return #"<?xml version="1.0" encoding="utf-8"?><feed version="0.3" xmlns="http://purl.org/atom/ns#"><title>Feed</title>"#
            + "\n" + body + "\n</feed>\n"
    }

    static func jsonFeed(_ items: [[String: Any]], version: String = "1.1") -> String {
        let object: [String: Any] = ["version": "https://jsonfeed.org/version/\(version)", "title": "Feed", "items": items]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    static func utf8(_ text: String) -> Data { Data(text.utf8) }

    // MARK: Groups

    /// RFC 822 dates as RSS writes them (RSS 2.0 spec, RFC 822 §5, and the liberties real
    /// feeds take that feedparser's date tests list: named US zones, `UT`, two-digit
    /// years, no seconds, wrong day names, numeric offsets). `nil`: not a date.
    static let rfc822Dates: [(String, String?)] = [
        ("Tue, 10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"), ("Tue, 10 Jun 2003 04:00:00 +0000", "2003-06-10T04:00:00Z"),
        ("Tue, 10 Jun 2003 04:00:00 EST", "2003-06-10T09:00:00Z"), ("Tue, 10 Jun 2003 04:00:00 EDT", "2003-06-10T08:00:00Z"),
        ("Tue, 10 Jun 2003 04:00:00 CST", "2003-06-10T10:00:00Z"), ("Tue, 10 Jun 2003 04:00:00 CDT", "2003-06-10T09:00:00Z"),
        ("Tue, 10 Jun 2003 04:00:00 MST", "2003-06-10T11:00:00Z"), ("Tue, 10 Jun 2003 04:00:00 MDT", "2003-06-10T10:00:00Z"),
        ("Tue, 10 Jun 2003 04:00:00 PST", "2003-06-10T12:00:00Z"), ("Tue, 10 Jun 2003 04:00:00 PDT", "2003-06-10T11:00:00Z"),
        ("Tue, 10 Jun 2003 04:00:00 UT", "2003-06-10T04:00:00Z"), ("Tue, 10 Jun 2003 04:00:00 Z", "2003-06-10T04:00:00Z"),
        ("Tue, 10 Jun 2003 04:00 GMT", "2003-06-10T04:00:00Z"), ("10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"),
        ("Tue, 10 Jun 03 04:00:00 GMT", "2003-06-10T04:00:00Z"), ("Wed, 10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"),
        ("Tue, 10 June 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"), ("Tue, 10 Jun 2003 04:00:00 +0530", "2003-06-09T22:30:00Z"),
        ("Tue, 10 Jun 2003 04:00:00 -0800", "2003-06-10T12:00:00Z"), ("Tue,10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"),
        ("  Tue, 10 Jun 2003 04:00:00 GMT  ", "2003-06-10T04:00:00Z"), ("Tue, 10 Jun 2003 04:00:00", "2003-06-10T04:00:00Z"),
        ("Sun, 1 Jun 2003 04:00:00 GMT", "2003-06-01T04:00:00Z"), ("Sat, 29 Feb 2020 23:59:59 GMT", "2020-02-29T23:59:59Z"),
        ("tue, 10 jun 2003 04:00:00 gmt", "2003-06-10T04:00:00Z"), ("Thu, 01 Jan 1970 00:00:00 GMT", "1970-01-01T00:00:00Z"),
        ("2003-06-10T04:00:00Z", "2003-06-10T04:00:00Z"),
        ("yesterday", nil), ("Tue, 32 Jun 2003 04:00:00 GMT", nil), ("Tue, 10 Foo 2003 04:00:00 GMT", nil),
        ("Tue, 10 Jun 2003 25:00:00 GMT", nil), ("Tue, 10 Jun 2003 04:00:00 XYZ", nil), ("Fri, 29 Feb 2019 10:00:00 GMT", nil),
        ("10/06/2003", nil),
    ]

    /// ISO 8601 / RFC 3339 as Atom (RFC 4287 §3.3), Dublin Core and JSON Feed write them,
    /// with the variants seen in the wild (no zone, a space for `T`, fractions, `+0100`).
    static let isoDates: [(String, String?)] = [
        ("2003-12-13T18:30:02Z", "2003-12-13T18:30:02Z"), ("2003-12-13T18:30:02.25Z", "2003-12-13T18:30:02Z"),
        ("2003-12-13T18:30:02+01:00", "2003-12-13T17:30:02Z"), ("2003-12-13T18:30:02-05:00", "2003-12-13T23:30:02Z"),
        ("2003-12-13T18:30:02", "2003-12-13T18:30:02Z"), ("2003-12-13T18:30Z", "2003-12-13T18:30:00Z"),
        ("2003-12-13", "2003-12-13T00:00:00Z"), ("2003-12-13 18:30:02Z", "2003-12-13T18:30:02Z"),
        ("2003-12-13T18:30:02+0100", "2003-12-13T17:30:02Z"), ("2003-12-13t18:30:02z", "2003-12-13T18:30:02Z"),
        ("2003-12-31T23:30:00-01:00", "2004-01-01T00:30:00Z"),
        ("2003-13-13T00:00:00Z", nil), ("2003-02-30T00:00:00Z", nil), ("13/12/2003", nil), ("2003-12-13T18", nil),
    ]

    /// HTML 4 named entities in titles (HTML 4.01 §24), which XML does not declare.
    static let entities: [(String, String)] = [
        ("eacute", "é"), ("nbsp", " "), ("mdash", "—"), ("ndash", "–"), ("hellip", "…"), ("rsquo", "’"), ("lsquo", "‘"),
        ("ldquo", "“"), ("rdquo", "”"), ("copy", "©"), ("reg", "®"), ("trade", "™"), ("euro", "€"), ("pound", "£"),
        ("yen", "¥"), ("deg", "°"), ("frac12", "½"), ("uuml", "ü"), ("ouml", "ö"), ("szlig", "ß"), ("ntilde", "ñ"),
        ("ccedil", "ç"), ("Aring", "Å"), ("oslash", "ø"), ("alpha", "α"), ("Omega", "Ω"), ("rarr", "→"), ("hearts", "♥"),
        ("bull", "•"), ("times", "×"),
    ]

    static func dateCases() -> [Case] {
        var cases: [Case] = []
        for (index, (text, expected)) in rfc822Dates.enumerated() {
            cases.append(Case(name: "rss2 pubDate \(index): \(text)", body: utf8(rss2([Item(date: text)])),
                              expected: .cards([Want(id: "urn:entry:1", date: .some(expected))])))
        }
        for (index, (text, expected)) in isoDates.enumerated() {
            cases.append(Case(name: "rss1 dc:date \(index): \(text)", body: utf8(rss1([Item(date: text)])),
                              expected: .cards([Want(id: "urn:entry:1", date: .some(expected))])))
            cases.append(Case(name: "atom published \(index): \(text)", body: utf8(atom([Item(date: text)])),
                              expected: .cards([Want(id: "urn:entry:1", date: .some(expected))])))
            cases.append(Case(name: "atom updated only \(index): \(text)", body: utf8(atom([Item(date: text)], dateElement: "updated")),
                              expected: .cards([Want(id: "urn:entry:1", date: .some(expected))])))
            cases.append(Case(name: "atom 0.3 issued \(index): \(text)", body: utf8(atom03([Item(date: text)])),
                              expected: .cards([Want(id: "urn:entry:1", date: .some(expected))])))
            cases.append(Case(name: "json feed date_published \(index): \(text)",
                              body: utf8(jsonFeed([["id": "1", "title": "Entry", "date_published": text]])),
                              expected: .cards([Want(id: "1", date: .some(expected))])))
        }
        return cases
    }

    static func entityCases() -> [Case] {
        entities.flatMap { name, character -> [Case] in
            let title = "Caf&\(name); time"
            // A no-break space collapses with the space after it.
            let wants = [Want(id: "urn:entry:1", title: character == " " ? "Caf time" : "Caf\(character) time")]
            return [
                Case(name: "rss2 &\(name);", body: utf8(rss2([Item(title: title)])), expected: .cards(wants)),
                Case(name: "rss1 &\(name);", body: utf8(rss1([Item(title: title)])), expected: .cards(wants)),
                Case(name: "atom html &\(name);", body: utf8(atom([Item(title: title)])), expected: .cards(wants)),
                Case(name: "atom 0.3 &\(name);", body: utf8(atom03([Item(title: title)])), expected: .cards(wants)),
            ]
        }
    }

    /// Encodings (XML 1.0 §4.3.3 and Appendix F, and the undeclared windows-1252 that
    /// feed validators warn about most).
    static func encodingCases() -> [Case] {
        let latin = "Café crème ½"
        let windows = "Café – “quoted”"
        func encode(_ text: String, _ encoding: String.Encoding) -> Data { text.data(using: encoding) ?? Data() }
        var cases: [Case] = []
        for (format, build) in [("rss2", { (title: String, declaration: String) in rss2([Item(title: title)], declaration: declaration) }),
                                ("rss1", { (title: String, declaration: String) in rss1([Item(title: title)], declaration: declaration) }),
                                ("atom", { (title: String, declaration: String) in atom([Item(title: title)], declaration: declaration) })] {
            let want = { (title: String) in Expected.cards([Want(id: "urn:entry:1", title: title)]) }
            cases += [
                Case(name: "\(format) utf-8", body: utf8(build(latin, #"<?xml version="1.0" encoding="UTF-8"?>"#)), expected: want(latin)),
                Case(name: "\(format) utf-8 with a BOM", body: Data([0xEF, 0xBB, 0xBF]) + utf8(build(latin, #"<?xml version="1.0"?>"#)),
                     expected: want(latin)),
                Case(name: "\(format) blank lines before the declaration", body: utf8("\n\n  " + build(latin, #"<?xml version="1.0"?>"#)),
                     expected: want(latin)),
                Case(name: "\(format) iso-8859-1 declared", body: encode(build(latin, #"<?xml version="1.0" encoding="ISO-8859-1"?>"#), .isoLatin1),
                     expected: want(latin)),
                Case(name: "\(format) windows-1252 declared",
                     body: encode(build(windows, #"<?xml version="1.0" encoding="windows-1252"?>"#), .windowsCP1252), expected: want(windows)),
                Case(name: "\(format) windows-1252 declared as utf-8",
                     body: encode(build(windows, #"<?xml version="1.0" encoding="utf-8"?>"#), .windowsCP1252), expected: want(windows)),
                Case(name: "\(format) utf-16 little-endian", body: Data([0xFF, 0xFE]) + encode(build(latin, #"<?xml version="1.0" encoding="UTF-16"?>"#), .utf16LittleEndian),
                     expected: want(latin)),
                Case(name: "\(format) utf-16 big-endian", body: Data([0xFE, 0xFF]) + encode(build(latin, #"<?xml version="1.0" encoding="UTF-16"?>"#), .utf16BigEndian),
                     expected: want(latin)),
                Case(name: "\(format) a bare ampersand", body: utf8(build("AT&T news", #"<?xml version="1.0"?>"#)), expected: want("AT&T news")),
                Case(name: "\(format) CDATA title", body: utf8(build("<![CDATA[<b>Bold</b> & plain]]>", #"<?xml version="1.0"?>"#)),
                     expected: want("Bold & plain")),
            ]
        }
        return cases
    }

    /// Links and ids: RSS 2.0 (guid, isPermaLink), Atom (RFC 4287 §4.2.7 link relations,
    /// xml:base §2), RSS 1.0 rdf:about, JSON Feed 1.1 (id, url, external_url).
    static func linkAndIDCases() -> [Case] {
        [
            Case(name: "rss2 relative link", body: utf8(rss2([Item(link: "/posts/1")])),
                 expected: .cards([Want(id: "urn:entry:1", url: "https://feeds.example.org/posts/1")])),
            Case(name: "rss2 permalink guid without link",
                 body: utf8(rss2([Item(id: nil, link: nil, extra: "<guid>https://example.org/p/9</guid>")])),
                 expected: .cards([Want(id: "https://example.org/p/9", url: "https://example.org/p/9")])),
            Case(name: "rss2 guid not claimed as a permalink, but a web address, without link",
                 body: utf8(rss2([Item(id: nil, link: nil, extra: #"<guid isPermaLink="false">https://example.org/p/10</guid>"#)])),
                 expected: .cards([Want(id: "https://example.org/p/10", url: "https://example.org/p/10")])),
            Case(name: "rss2 guid that is a name, not a link",
                 body: utf8(rss2([Item(id: nil, link: nil, extra: "<guid>post-9</guid>")])),
                 expected: .cards([Want(id: "post-9", url: .some(nil))])),
            Case(name: "rss2 no guid: the link is the id", body: utf8(rss2([Item(id: nil, link: "https://example.org/a")])),
                 expected: .cards([Want(id: "https://example.org/a", url: "https://example.org/a")])),
            Case(name: "rss2 mailto link is no url", body: utf8(rss2([Item(link: "mailto:editor@example.org")])),
                 expected: .cards([Want(id: "urn:entry:1", url: .some(nil))])),
            Case(name: "rss2 duplicate guids: the first wins",
                 body: utf8(rss2([Item(title: "First"), Item(title: "Second"), Item(title: "Third", id: "urn:entry:3")])),
                 expected: .cards([Want(id: "urn:entry:1", title: "First"), Want(id: "urn:entry:3", title: "Third")])),
            Case(name: "atom xml:base on the feed",
                 body: utf8(atom([Item(link: "entries/7")], feedExtra: "").replacingOccurrences(of: "<feed xmlns", with: #"<feed xml:base="https://base.example.net/blog/" xmlns"#)),
                 expected: .cards([Want(id: "urn:entry:1", url: "https://base.example.net/blog/entries/7")])),
            Case(name: "atom xml:base on the entry",
                 body: utf8(atom([Item(link: "7")]).replacingOccurrences(of: "<entry>", with: #"<entry xml:base="https://base.example.net/e/">"#)),
                 expected: .cards([Want(id: "urn:entry:1", url: "https://base.example.net/e/7")])),
            Case(name: "atom alternates: the HTML one",
                 body: utf8(atom([Item(link: nil, extra: #"<link rel="alternate" type="application/pdf" href="https://example.org/1.pdf"/><link rel="alternate" type="text/html" href="https://example.org/1.html"/>"#)])),
                 expected: .cards([Want(id: "urn:entry:1", url: "https://example.org/1.html")])),
            Case(name: "atom self and edit links are not the url",
                 body: utf8(atom([Item(link: nil, extra: #"<link rel="self" href="https://example.org/self"/><link rel="edit" href="https://example.org/edit"/>"#)])),
                 expected: .cards([Want(id: "urn:entry:1", url: .some(nil))])),
            Case(name: "rss1 rdf:about is the id", body: utf8(rss1([Item(id: "https://example.org/rdf/1", link: "https://example.org/rdf/1")])),
                 expected: .cards([Want(id: "https://example.org/rdf/1", url: "https://example.org/rdf/1")])),
            Case(name: "json feed numeric id", body: utf8(jsonFeed([["id": 42, "title": "Answer", "url": "https://example.org/42"]])),
                 expected: .cards([Want(id: "42", title: "Answer", url: "https://example.org/42")])),
            Case(name: "json feed external_url", body: utf8(jsonFeed([["id": "x", "title": "Elsewhere", "external_url": "https://elsewhere.example/"]])),
                 expected: .cards([Want(id: "x", url: "https://elsewhere.example/")])),
            Case(name: "json feed 1.0 author", body: utf8(jsonFeed([["id": "x", "title": "T", "author": ["name": "Ann"]]], version: "1")),
                 expected: .cards([Want(id: "x", author: "Ann")])),
            Case(name: "json feed 1.1 authors", body: utf8(jsonFeed([["id": "x", "title": "T", "authors": [["name": "Bo"]]]])),
                 expected: .cards([Want(id: "x", author: "Bo")])),
        ]
    }

    /// Titles, authors, images, tags (RSS 2.0 and its modules: Dublin Core, Media RSS,
    /// iTunes; Atom text constructs, RFC 4287 §3.1).
    static func fieldCases() -> [Case] {
        let media = #"xmlns:media="http://search.yahoo.com/mrss/" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:x="urn:unknown""#
        return [
            Case(name: "rss2 no title: the first words", body: utf8(rss2([Item(title: nil, extra: "<description>One two three four five six seven eight nine ten eleven twelve</description>")])),
                 expected: .cards([Want(id: "urn:entry:1", title: "One two three four five six seven eight nine ten…")])),
            Case(name: "rss2 escaped markup in a title", body: utf8(rss2([Item(title: "&lt;b&gt;Bold&lt;/b&gt; news")])),
                 expected: .cards([Want(id: "urn:entry:1", title: "Bold news")])),
            Case(name: "atom text title keeps angle brackets", body: utf8(atom([Item(title: "1 &lt; 2")], titleType: "text")),
                 expected: .cards([Want(id: "urn:entry:1", title: "1 < 2")])),
            Case(name: "atom untyped title is text", body: utf8(atom([Item(title: "a &amp;lt;b&amp;gt;")], titleType: nil)),
                 expected: .cards([Want(id: "urn:entry:1", title: "a &lt;b&gt;")])),
            Case(name: "white space collapses", body: utf8(rss2([Item(title: "  Many\n\t  spaces   here ")])),
                 expected: .cards([Want(id: "urn:entry:1", title: "Many spaces here")])),
            Case(name: "rss2 author with email", body: utf8(rss2([Item(extra: "<author>jane@example.org (Jane Doe)</author>")])),
                 expected: .cards([Want(id: "urn:entry:1", author: "Jane Doe")])),
            Case(name: "dc:creator", body: utf8(rss2([Item(extra: "<dc:creator>Kim</dc:creator>")], namespaces: media)),
                 expected: .cards([Want(id: "urn:entry:1", author: "Kim")])),
            Case(name: "the feed's author stands in", body: utf8(rss2([Item()], channelExtra: "<managingEditor>ed@example.org (The Editor)</managingEditor>")),
                 expected: .cards([Want(id: "urn:entry:1", author: "The Editor")])),
            Case(name: "media:thumbnail", body: utf8(rss2([Item(extra: #"<media:thumbnail url="https://img.example.org/t.jpg"/>"#)], namespaces: media)),
                 expected: .cards([Want(id: "urn:entry:1", image: "https://img.example.org/t.jpg")])),
            Case(name: "media:content image", body: utf8(rss2([Item(extra: #"<media:content url="https://img.example.org/c.jpg" medium="image"/>"#)], namespaces: media)),
                 expected: .cards([Want(id: "urn:entry:1", image: "https://img.example.org/c.jpg")])),
            Case(name: "media:content video is no image", body: utf8(rss2([Item(extra: #"<media:content url="https://v.example.org/c.mp4" type="video/mp4"/>"#)], namespaces: media)),
                 expected: .cards([Want(id: "urn:entry:1", image: .some(nil))])),
            Case(name: "itunes:image", body: utf8(rss2([Item(extra: #"<itunes:image href="https://img.example.org/i.jpg"/>"#)], namespaces: media)),
                 expected: .cards([Want(id: "urn:entry:1", image: "https://img.example.org/i.jpg")])),
            Case(name: "image enclosure", body: utf8(rss2([Item(extra: #"<enclosure url="https://img.example.org/e.png" type="image/png" length="10"/>"#)])),
                 expected: .cards([Want(id: "urn:entry:1", image: "https://img.example.org/e.png")])),
            Case(name: "first img of the content, made absolute",
                 body: utf8(rss2([Item(extra: #"<description>&lt;p&gt;&lt;img src="/i/first.jpg"&gt;&lt;img src="/i/second.jpg"&gt;&lt;/p&gt;</description>"#)])),
                 expected: .cards([Want(id: "urn:entry:1", image: "https://example.org/i/first.jpg")])),
            Case(name: "categories and dc:subject", body: utf8(rss2([Item(extra: "<category>A</category><category>B</category><dc:subject>C</dc:subject>")], namespaces: media)),
                 expected: .cards([Want(id: "urn:entry:1", tags: ["A", "B", "C"])])),
            Case(name: "atom category label before term",
                 body: utf8(atom([Item(extra: #"<category term="t1" label="Label one"/><category term="t2"/>"#)])),
                 expected: .cards([Want(id: "urn:entry:1", tags: ["Label one", "t2"])])),
            Case(name: "unknown namespaces and elements are ignored",
                 body: utf8(rss2([Item(title: "Kept", extra: "<x:rating>5</x:rating><x:deep><x:deeper>1</x:deeper></x:deep><unknown>u</unknown>")], namespaces: media)),
                 expected: .cards([Want(id: "urn:entry:1", title: "Kept")])),
            Case(name: "an empty feed has no cards", body: utf8(rss2([])), expected: .cards([])),
        ]
    }

    /// The specs' own examples: RSS 2.0 (rssboard.org sample), RSS 0.91, RSS 1.0 (§5.1
    /// of the spec), Atom 1.0 (RFC 4287 §1.1, both examples), JSON Feed 1.1.
    static func specCases() -> [Case] {
        let rss091 = """
            <?xml version="1.0" encoding="ISO-8859-1" ?>
            <rss version="0.91"><channel><title>WriteTheWeb</title><link>http://writetheweb.com</link>
            <description>News for web users that write back</description><language>en-us</language>
            <item><title>Giving the world a pluggable Gnutella</title><link>http://writetheweb.com/read.php?item=24</link>
            <description>WorldOS is a framework on which to build programs that work like Freenet or Gnutella.</description></item>
            </channel></rss>
            """
        let rss20 = """
            <?xml version="1.0"?>
            <rss version="2.0"><channel><title>Liftoff News</title><link>http://liftoff.msfc.nasa.gov/</link>
            <description>Liftoff to Space Exploration.</description><language>en-us</language>
            <pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate><managingEditor>editor@example.com</managingEditor>
            <item><title>Star City</title><link>http://liftoff.msfc.nasa.gov/news/2003/news-starcity.asp</link>
            <description>How do Americans get ready to work with Russians aboard the International Space Station?</description>
            <pubDate>Tue, 03 Jun 2003 09:39:21 GMT</pubDate><guid>http://liftoff.msfc.nasa.gov/2003/06/03.html#item573</guid></item>
            <item><description>Sky watchers in Europe, Asia, and parts of Alaska and Canada will experience a partial eclipse of the Sun on Saturday, May 31st.</description>
            <pubDate>Fri, 30 May 2003 11:06:42 GMT</pubDate><guid>http://liftoff.msfc.nasa.gov/2003/05/30.html#item572</guid></item>
            </channel></rss>
            """
        let rss10 = """
            <?xml version="1.0"?>
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
            <channel rdf:about="http://www.xml.com/xml/news.rss"><title>XML.com</title><link>http://xml.com/pub</link>
            <description>XML.com features a rich mix of information and services for the XML community.</description></channel>
            <item rdf:about="http://xml.com/pub/2000/08/09/xslt/xslt.html"><title>Processing Inclusions with XSLT</title>
            <link>http://xml.com/pub/2000/08/09/xslt/xslt.html</link><description>Processing document inclusions with general XML tools can be problematic.</description></item>
            <item rdf:about="http://xml.com/pub/2000/08/09/rdfdb/index.html"><title>Putting RDF to Work</title>
            <link>http://xml.com/pub/2000/08/09/rdfdb/index.html</link><description>Tool and API support for the Resource Description Framework is slowly coming of age.</description></item>
            </rdf:RDF>
            """
        let atomMinimal = """
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom"><title>Example Feed</title><link href="http://example.org/"/>
            <updated>2003-12-13T18:30:02Z</updated><author><name>John Doe</name></author><id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
            <entry><title>Atom-Powered Robots Run Amok</title><link href="http://example.org/2003/12/13/atom03"/>
            <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id><updated>2003-12-13T18:30:02Z</updated><summary>Some text.</summary></entry>
            </feed>
            """
        let atomExtensive = """
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom"><title type="text">dive into mark</title>
            <subtitle type="html">A &lt;em&gt;lot&lt;/em&gt; of effort went into making this effortless</subtitle>
            <updated>2005-07-31T12:29:29Z</updated><id>tag:example.org,2003:3</id>
            <link rel="alternate" type="text/html" hreflang="en" href="http://example.org/"/>
            <link rel="self" type="application/atom+xml" href="http://example.org/feed.atom"/>
            <rights>Copyright (c) 2003, Mark Pilgrim</rights>
            <entry><title>Atom draft-07 snapshot</title>
            <link rel="alternate" type="text/html" href="http://example.org/2005/04/02/atom"/>
            <link rel="enclosure" type="audio/mpeg" length="1337" href="http://example.org/audio/ph34r_my_podcast.mp3"/>
            <id>tag:example.org,2003:3.2397</id><updated>2005-07-31T12:29:29Z</updated><published>2003-12-13T08:29:29-04:00</published>
            <author><name>Mark Pilgrim</name><uri>http://example.org/</uri><email>f8dy@example.com</email></author>
            <contributor><name>Sam Ruby</name></contributor><contributor><name>Joe Gregorio</name></contributor>
            <content type="xhtml" xml:lang="en" xml:base="http://diveintomark.org/"><div xmlns="http://www.w3.org/1999/xhtml"><p><i>[Update: The Atom draft is finished.]</i></p></div></content>
            </entry></feed>
            """
        let json = """
            {"version": "https://jsonfeed.org/version/1.1", "title": "My Example Feed", "home_page_url": "https://example.org/",
             "feed_url": "https://example.org/feed.json",
             "items": [{"id": "2", "content_text": "This is a second item.", "url": "https://example.org/second-item"},
                       {"id": "1", "content_html": "<p>Hello, world!</p>", "url": "https://example.org/initial-post"}]}
            """
        return [
            Case(name: "spec: RSS 0.91", body: Data(rss091.data(using: .isoLatin1) ?? Data()), expected: .cards([
                Want(id: "http://writetheweb.com/read.php?item=24", title: "Giving the world a pluggable Gnutella",
                     url: "http://writetheweb.com/read.php?item=24", date: .some(nil)),
            ])),
            Case(name: "spec: RSS 2.0 sample", body: utf8(rss20), expected: .cards([
                Want(id: "http://liftoff.msfc.nasa.gov/2003/06/03.html#item573", title: "Star City",
                     url: "http://liftoff.msfc.nasa.gov/news/2003/news-starcity.asp", date: "2003-06-03T09:39:21Z", author: "editor@example.com"),
                Want(id: "http://liftoff.msfc.nasa.gov/2003/05/30.html#item572",
                     title: "Sky watchers in Europe, Asia, and parts of Alaska and…",
                     url: "http://liftoff.msfc.nasa.gov/2003/05/30.html#item572", date: "2003-05-30T11:06:42Z"),
            ])),
            Case(name: "spec: RSS 1.0", body: utf8(rss10), expected: .cards([
                Want(id: "http://xml.com/pub/2000/08/09/xslt/xslt.html", title: "Processing Inclusions with XSLT",
                     url: "http://xml.com/pub/2000/08/09/xslt/xslt.html", date: .some(nil)),
                Want(id: "http://xml.com/pub/2000/08/09/rdfdb/index.html", title: "Putting RDF to Work",
                     url: "http://xml.com/pub/2000/08/09/rdfdb/index.html"),
            ])),
            Case(name: "spec: Atom minimal (RFC 4287 1.1)", body: utf8(atomMinimal), expected: .cards([
                Want(id: "urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a", title: "Atom-Powered Robots Run Amok",
                     url: "http://example.org/2003/12/13/atom03", date: "2003-12-13T18:30:02Z", author: "John Doe"),
            ])),
            Case(name: "spec: Atom extensive (RFC 4287 1.1)", body: utf8(atomExtensive), expected: .cards([
                Want(id: "tag:example.org,2003:3.2397", title: "Atom draft-07 snapshot", url: "http://example.org/2005/04/02/atom",
                     date: "2003-12-13T12:29:29Z", author: "Mark Pilgrim"),
            ])),
            Case(name: "spec: JSON Feed 1.1", body: utf8(json), expected: .cards([
                Want(id: "2", title: "This is a second item.", url: "https://example.org/second-item"),
                Want(id: "1", title: "Hello, world!", url: "https://example.org/initial-post"),
            ])),
        ]
    }

    /// Shapes a peer's liberal-parsing corpus has and we read wrong until issue 39: Atom text
    /// constructs escaped, in base64 or as XHTML (also inside `xml:base`/`xml:lang` and
    /// with entities), RSS titles only in `dc:title` or `media:title`, RSS 2.0 in the
    /// Userland namespace, a channel's `dc:date` for items without one, and CDF.
    static func peerCorpusCases() -> [Case] {
        let atomEntry = { (title: String) in
            #"<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Feed</title><entry><id>urn:e:1</id>"#
                + title + #"<link href="https://example.org/e/1"/></entry></feed>"#
        }
        let atom03Entry = { (title: String) in
            #"<?xml version="1.0" encoding="utf-8"?><feed version="0.3" xmlns="http://purl.org/atom/ns#"><title>Feed</title><entry><id>urn:e:1</id>"#
                + title + #"<link rel="alternate" type="text/html" href="https://example.org/e/1"/></entry></feed>"#
        }
        let want = { (title: String) in Expected.cards([Want(id: "urn:e:1", title: title)]) }
        let xhtml = #"xmlns:xhtml="http://www.w3.org/1999/xhtml""#
        return [
            Case(name: "atom 0.3 title mode=escaped", body: utf8(atom03Entry(#"<title mode="escaped">Fish &amp;amp; &lt;b&gt;chips&lt;/b&gt;</title>"#)),
                 expected: want("Fish & chips")),
            Case(name: "atom 0.3 title mode=base64", body: utf8(atom03Entry(#"<title mode="base64">RXhhbXBsZSA8Yj5BdG9tPC9iPg==</title>"#)),
                 expected: want("Example <b>Atom</b>")),
            Case(name: "atom 0.3 title type=text/html mode=base64",
                 body: utf8(atom03Entry(#"<title type="text/html" mode="base64">RXhhbXBsZSA8Yj5BdG9tPC9iPg==</title>"#)),
                 expected: want("Example Atom")),
            Case(name: "atom 0.3 title type=application/xhtml+xml",
                 body: utf8(atom03Entry(#"<title type="application/xhtml+xml"><div xmlns="http://www.w3.org/1999/xhtml">Example <b>Atom</b></div></title>"#)),
                 expected: want("Example Atom")),
            Case(name: "atom 1.0 title type=xhtml", body: utf8(atomEntry(#"<title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Less: <em>&lt;</em></div></title>"#)),
                 expected: want("Less: <")),
            Case(name: "atom 1.0 title type=xhtml with a prefix", body: utf8(atomEntry(#"<title type="xhtml"><xhtml:div \#(xhtml)>Example <xhtml:b>Atom</xhtml:b></xhtml:div></title>"#)),
                 expected: want("Example Atom")),
            Case(name: "atom 1.0 title type=xhtml with entities",
                 body: utf8(atomEntry(#"<title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Fish &#38; chips &amp; peas</div></title>"#)),
                 expected: want("Fish & chips & peas")),
            Case(name: "atom 1.0 title type=xhtml in xml:base and xml:lang",
                 body: utf8(atomEntry(#"<title type="xhtml" xml:base="https://example.org/t/" xml:lang="en"><div xmlns="http://www.w3.org/1999/xhtml"><a href="x">Linked</a> title</div></title>"#)),
                 expected: want("Linked title")),
            Case(name: "atom 1.0 title type=application/xhtml+xml",
                 body: utf8(atomEntry(#"<title type="application/xhtml+xml"><div xmlns="http://www.w3.org/1999/xhtml">Example <i>XHTML</i></div></title>"#)),
                 expected: want("Example XHTML")),
            Case(name: "rss 2.0 title only in dc:title",
                 body: utf8(rss2([Item(title: nil, extra: "<dc:title>Dublin Core title</dc:title>")], namespaces: #"xmlns:dc="http://purl.org/dc/elements/1.1/""#)),
                 expected: .cards([Want(id: "urn:entry:1", title: "Dublin Core title")])),
            Case(name: "rss 2.0 title only in media:title",
                 body: utf8(rss2([Item(title: nil, extra: "<media:title>Media RSS title</media:title>")], namespaces: #"xmlns:media="http://search.yahoo.com/mrss/""#)),
                 expected: .cards([Want(id: "urn:entry:1", title: "Media RSS title")])),
            Case(name: "rss 2.0 in the Userland namespace",
                 body: utf8(#"<?xml version="1.0"?><rss version="2.0" xmlns="http://backend.userland.com/rss2"><channel><title>Feed</title><item><title>Userland item</title><link>https://example.org/u/1</link><guid>https://example.org/u/1</guid><pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate></item></channel></rss>"#),
                 expected: .cards([Want(id: "https://example.org/u/1", title: "Userland item", url: "https://example.org/u/1", date: "2003-06-10T04:00:00Z")])),
            Case(name: "rss 2.0 items dated by the channel's dc:date",
                 body: utf8(rss2([Item(), Item(id: "urn:entry:2", date: "Tue, 10 Jun 2003 04:00:00 GMT")],
                                 channelExtra: "<dc:date>2004-01-02T03:04:05Z</dc:date>", namespaces: #"xmlns:dc="http://purl.org/dc/elements/1.1/""#)),
                 expected: .cards([Want(id: "urn:entry:1", date: "2004-01-02T03:04:05Z"), Want(id: "urn:entry:2", date: "2003-06-10T04:00:00Z")])),
            Case(name: "rss 1.0 items dated by the channel's dc:date",
                 body: utf8(rss1([Item()]).replacingOccurrences(of: "<title>Feed</title>", with: "<title>Feed</title><dc:date>2004-01-02T03:04:05Z</dc:date>")),
                 expected: .cards([Want(id: "urn:entry:1", date: "2004-01-02T03:04:05Z")])),
            Case(name: "cdf",
                 body: utf8(#"<?xml version="1.0"?><CHANNEL HREF="https://example.org/" LASTMOD="2004-01-02T03:04:05"><TITLE>Channel</TITLE><ITEM HREF="https://example.org/cdf/1" LASTMOD="2003-06-10T04:00:00"><TITLE>CDF item</TITLE><ABSTRACT>What it is</ABSTRACT></ITEM></CHANNEL>"#),
                 expected: .cards([Want(id: "https://example.org/cdf/1", title: "CDF item", url: "https://example.org/cdf/1", date: "2003-06-10T04:00:00Z")])),
        ]
    }

    /// What must fail, each with one clear line.
    static func failureCases() -> [Case] {
        let html = #"<!DOCTYPE html><html><head><link rel="alternate" type="application/rss+xml" href="/rss.xml"></head><body></body></html>"#
        let whole = rss2([Item(), Item(id: "urn:entry:2")])
        return [
            Case(name: "truncated rss", body: utf8(String(whole.prefix(whole.count * 2 / 3))), expected: .failure("the feed is not well-formed XML (line")),
            Case(name: "truncated atom", body: utf8(String(atom([Item()]).dropLast(30))), expected: .failure("it may be cut short")),
            Case(name: "an html page names its feeds", body: utf8(html),
                 expected: .failure("the URL gives an HTML page, not a feed; the page names https://feeds.example.org/rss.xml: set url: to one")),
            Case(name: "an html page without feeds", body: utf8("<html><body>Hi</body></html>"),
                 expected: .failure("the URL gives an HTML page, not a feed, and the page names no feed")),
            Case(name: "xml that is not a feed", body: utf8(#"<?xml version="1.0"?><opml version="2.0"><body/></opml>"#),
                 expected: .failure("not a feed: the document is <opml>")),
            Case(name: "an empty body", body: Data(), expected: .failure("the body is empty, not a feed")),
            Case(name: "json that is not a feed", body: utf8(#"{"items": []}"#), expected: .failure("the body is not a feed")),
            Case(name: "billion laughs is inert",
                 body: utf8(#"<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><rss version="2.0"><channel><item><title>&b;</title><guid>g</guid></item></channel></rss>"#),
                 expected: .cards([Want(id: "g", title: "&b;")])),
        ]
    }

    static let all: [Case] = dateCases() + entityCases() + encodingCases() + linkAndIDCases() + fieldCases() + specCases()
        + peerCorpusCases() + failureCases()

    @Test func theCorpusIsLargeEnough() {
        #expect(Self.all.count >= 300, "\(Self.all.count) documents")
    }

    @Test(arguments: all)
    func eachDocumentGivesItsCards(_ corpusCase: Case) async throws {
        let source = try WebFeedTests.source(corpusCase.url, body: corpusCase.body)
        switch corpusCase.expected {
        case .failure(let message):
            do {
                let page = try await source.page(after: nil)
                Issue.record("expected a failure, got \(page.cards.count) cards")
            } catch let error as SourceError {
                #expect(error.description.contains(message), "\(error.description)")
            }
        case .cards(let wants):
            let page = try await source.page(after: nil)
            #expect(page.cards.count == wants.count, "\(page.cards.map(\.upstreamID))")
            for (card, want) in zip(page.cards, wants) {
                if let id = want.id { #expect(card.upstreamID == id) }
                if let title = want.title { #expect(card.title == title) }
                if let url = want.url { #expect(card.url?.absoluteString == url) }
                if let date = want.date { #expect(card.published.map(RFC3339Text.string) == date) }
                if let image = want.image { #expect(card.image?.absoluteString == image) }
                if let author = want.author { #expect(card.author?.name == author) }
                if let tags = want.tags { #expect(card.tags == tags) }
                #expect(!card.title.isEmpty)
            }
        }
    }

    /// An entry with no id and no link gets a hashed id that two reads agree on.
    @Test func theHashedIDIsStable() async throws {
        let body = Self.utf8(Self.rss2([Item(title: "No id", id: nil, link: nil, date: "Tue, 10 Jun 2003 04:00:00 GMT")]))
        let first = try await WebFeedTests.source("https://feeds.example.org/feed", body: body).page(after: nil).cards
        let second = try await WebFeedTests.source("https://feeds.example.org/feed", body: body).page(after: nil).cards
        #expect(first.map(\.upstreamID) == second.map(\.upstreamID))
        #expect(first.first?.upstreamID.hasPrefix("hash-") == true)
    }
}

/// Dates as the corpus writes them.
enum RFC3339Text {
    static func string(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
    }
}
