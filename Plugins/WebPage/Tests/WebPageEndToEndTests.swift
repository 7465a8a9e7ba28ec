import FeedCore
import FeedSourceTesting
import FixtureKit
import Foundation
import Testing
@testable import WebPage

/// `plugin: html` through the built binary and the fixture server's `/page/` routes (issue
/// 63): the conformance suite, then each page shape real sites have, card by card. Cards
/// are compared as their JSON lines, the fixture server's address written `BASE`.
@Suite(.serialized) struct WebPageEndToEndTests {
    @Test func theConformanceSuitePasses() async throws {
        try await Conformance.check(WebPageSource.self)
    }

    static func entry(_ id: String, _ path: String, _ options: String = "") -> FixtureSourceEntry {
        FixtureSourceEntry(id: id, plugin: "html", path: "/page/" + path, route: "page", extraYAML: options.isEmpty ? "" : "    options:\n" + options)
    }

    /// The run's cards as JSON lines (BASE for the fixture server), and the run.
    static func lines(_ sources: [FixtureSourceEntry], _ arguments: String...) async throws -> (lines: [String], run: Binary.Run) {
        try await FixtureWorld.withSession(sources: sources) { session in
            let run = try await session.workspace.run(arguments: ["--all", "--format", "jsonl"] + arguments)
            let base = session.base.absoluteString.hasSuffix("/") ? String(session.base.absoluteString.dropLast()) : session.base.absoluteString
            return (run.stdoutLines.map { $0.replacingOccurrences(of: base, with: "BASE") }, run)
        }
    }

    @Test func aBlogListGivesEveryFieldAndWalksToTheNextPage() async throws {
        let (lines, run) = try await Self.lines(FixtureWorld.enabled("page-blog"))
        #expect(lines == [
            #"{"author":{"name":"Mara Lindqvist"},"details":{"content":"<p>The harbour office published the <b>winter</b> tables.</p>\n<p>Ferries change on 1 December.</p>"},"id":"page-blog:1042","image":"BASE/img/tides.jpg","kind":"post","published":"2026-11-28T09:30:00Z","source":"page-blog","summary":"The harbour office published the winter tables.","tags":[],"title":"New tide tables for the winter","url":"BASE/news/tide-tables","v":1}"#,
            #"{"details":{"content":"<p>From December the market is held on Saturdays.x</p>"},"id":"page-blog:1041","kind":"post","published":"2026-11-26T15:00:00Z","source":"page-blog","summary":"From December the market is held on Saturdays.","tags":[],"title":"Market day moves to Saturday","url":"BASE/news/market-day","v":1}"#,
            #"{"id":"page-blog:1040","kind":"post","published":"2026-11-20T00:00:00Z","source":"page-blog","summary":"Visitors may climb it again from Friday.","tags":[],"title":"The lighthouse reopens","url":"https://elsewhere.example/lighthouse","v":1}"#,
            #"{"id":"page-blog:1039","kind":"post","published":"2026-11-12T08:00:00Z","source":"page-blog","tags":[],"title":"Winter ferry timetable","url":"BASE/news/ferry","v":1}"#,
            #"{"id":"page-blog:1038","kind":"post","published":"2026-11-05T19:00:00Z","source":"page-blog","tags":[],"title":"The harbour choir sings","url":"BASE/news/choir","v":1}"#,
        ])
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        // Without `:not(.ad)`, the ad, which has no title, is skipped and said (exit 3:
        // some records were skipped).
        let every = Self.entry("every", "blog.html", "      item: \"article.post\"\n      title: \"h2 a\"\n")
        let (all, skipping) = try await Self.lines([every])
        #expect(all.count == 3)
        #expect(skipping.status == 3)
        #expect(skipping.stderrLines == ["every: skipped article.post[3]: `h2 a` found no title in this item"])
    }

    @Test func aShopGridByItsStructuredDataAndByItsShownPrices() async throws {
        let (structured, run) = try await Self.lines(FixtureWorld.enabled("page-shop"))
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        #expect(structured == [
            #"{"id":"page-shop:DW-45","image":"BASE/img/dw-45.jpg","kind":"product","price":{"amount":1299,"currency":"GBP"},"source":"page-shop","tags":[],"title":"Quiet 45 dishwasher","url":"BASE/p/dw-45","v":1}"#,
            #"{"id":"page-shop:DW-60","kind":"product","price":{"amount":649,"currency":"GBP","max":699},"source":"page-shop","tags":[],"title":"Compact 60 dishwasher","url":"BASE/p/dw-60","v":1}"#,
            #"{"id":"page-shop:KT-1","kind":"product","price":{"amount":24.5,"currency":"EUR"},"source":"page-shop","tags":[],"title":"Kettle à la carte","url":"BASE/p/kt-1","v":1}"#,
        ])
        let tiles = Self.entry("tiles", "shop.html", """
                  item: ".grid > .tile"
                  title: "a.name"
                  link: "a.name @href"
                  price: ".price"
                  id: "@data-sku"

            """)
        let (shown, _) = try await Self.lines([tiles], "--sort", "price")
        #expect(shown == [
            #"{"id":"tiles:KT-1","kind":"product","price":{"amount":24.5,"currency":"EUR","display":"24,50 €"},"source":"tiles","tags":[],"title":"Kettle à la carte","url":"BASE/p/kt-1","v":1}"#,
            #"{"id":"tiles:DW-60","kind":"product","price":{"amount":649,"currency":"GBP","display":"£649.00"},"source":"tiles","tags":[],"title":"Compact 60 dishwasher","url":"BASE/p/dw-60","v":1}"#,
            #"{"id":"tiles:DW-45","kind":"product","price":{"amount":1299,"currency":"GBP","display":"£1,299.00"},"source":"tiles","tags":[],"title":"Quiet 45 dishwasher","url":"BASE/p/dw-45","v":1}"#,
        ])
    }

    /// A table pasted as XPath with the `tbody` the inspector shows, dates in a format of
    /// the page's own; windows-1252 by its header, Shift_JIS by its `<meta>`; broken markup
    /// as a browser recovers it.
    @Test func tablesCharsetsAndBrokenMarkupReadAsABrowserShowsThem() async throws {
        let sources = [
            Self.entry("releases", "table.html", """
                      item: "xpath://table[@id='releases']/tbody/tr[td]"
                      title: "td:first-child a"
                      link: "td:first-child a @href"
                      date: "xpath:td[2]"
                      date_format: "%d.%m.%Y"

                """),
            Self.entry("latin", "latin.html", "      item: \"ul.menu li\"\n      title: \"xpath:.\"\n      id: \"@data-id\"\n"),
            Self.entry("sjis", "sjis.html", "      item: \"h3.t\"\n      title: \"xpath:.\"\n"),
            Self.entry("broken", "broken.html", "      item: \"div.entry\"\n      title: \"a\"\n      id: \"a @href\"\n"),
        ]
        let (lines, run) = try await Self.lines(sources, "--sort", "source")
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        #expect(lines == [
            #"{"id":"broken:/a","kind":"post","source":"broken","tags":[],"title":"First bold","v":1}"#,
            #"{"id":"broken:/b","kind":"post","source":"broken","tags":[],"title":"Second unclosed paragraph Third","v":1}"#,
            #"{"id":"broken:/c","kind":"post","source":"broken","tags":[],"title":"Third","v":1}"#,
            #"{"id":"latin:1","kind":"post","source":"latin","tags":[],"title":"Café crème – 3,50 €","v":1}"#,
            #"{"id":"latin:2","kind":"post","source":"latin","tags":[],"title":"Señor","v":1}"#,
            #"{"id":"releases:BASE/v/2.4","kind":"post","published":"2026-11-03T00:00:00Z","source":"releases","tags":[],"title":"2.4.0","url":"BASE/v/2.4","v":1}"#,
            #"{"id":"releases:BASE/v/2.3","kind":"post","published":"2026-09-17T00:00:00Z","source":"releases","tags":[],"title":"2.3.1","url":"BASE/v/2.3","v":1}"#,
            #"{"id":"sjis:d72b665248cce3b3","kind":"post","source":"sjis","tags":[],"title":"日本のニュース","v":1}"#,
            #"{"id":"sjis:35c5c615bd272136","kind":"post","source":"sjis","tags":[],"title":"東京タワー","v":1}"#,
        ])
    }

    /// Without selectors: a product page's JSON-LD (in `@graph`, before its OpenGraph), a
    /// page with OpenGraph alone, microdata products.
    @Test func structuredDataMakesProductCards() async throws {
        let (lines, run) = try await Self.lines([Self.entry("product", "product.html"), Self.entry("og", "og.html"), Self.entry("micro", "micro.html")],
                                                "--sort", "source")
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        #expect(lines == [
            #"{"id":"micro:PAN-1","kind":"product","price":{"amount":39,"currency":"EUR"},"source":"micro","tags":[],"title":"Steel pan","url":"BASE/page/micro.html","v":1}"#,
            #"{"id":"micro:LID-2","kind":"product","price":{"amount":12,"currency":"EUR"},"source":"micro","tags":[],"title":"Cast iron lid","url":"BASE/page/micro.html","v":1}"#,
            #"{"id":"og:BASE/p/grinder","image":"BASE/img/grinder.jpg","kind":"product","price":{"amount":189.9,"currency":"EUR"},"source":"og","tags":[],"title":"Espresso grinder","url":"BASE/p/grinder","v":1}"#,
            #"{"details":{"brand":"Nordic","gtin13":"5012345678900"},"id":"product:5012345678900","image":"BASE/img/q45.jpg","kind":"product","price":{"amount":1249.5,"currency":"GBP"},"source":"product","summary":"Runs at 42 dB.","tags":[],"title":"Quiet 45 dishwasher","url":"BASE/page/product.html","v":1}"#,
        ])
    }

    /// A huge page is read (to max_items); a too-deep page, a selector that matches nothing
    /// and a page without structured data are each that source's failure, said in words.
    @Test func hostilePagesFailTheirSourceClearly() async throws {
        let sources = [
            Self.entry("huge", "huge.html", "      item: \"article.post\"\n      title: \"h2 a\"\n      id: \"@data-id\"\n"),
            Self.entry("deep", "deep.html", "      item: \"article.post\"\n      title: \"h2\"\n"),
            Self.entry("nothing", "shop.html", "      item: \"article.post\"\n      title: \"h2\"\n"),
            Self.entry("nodata", "table.html"),
        ]
        let (lines, run) = try await Self.lines(sources)
        #expect(lines.count == 1_000)
        #expect(lines.first == #"{"id":"huge:0","kind":"post","source":"huge","tags":[],"title":"Item 0","v":1}"#)
        // Some sources answered: exit 3, as for any run where others failed.
        #expect(run.status == 3)
        let said = run.stderrLines.map { $0.replacingOccurrences(of: #"http://127\.0\.0\.1:\d+"#, with: "BASE", options: .regularExpression) }
        #expect(said.contains("deep: the page nests elements more than 255 deep (BASE/page/deep.html)"), "\(said)")
        #expect(said.contains("nothing: `article.post` matched nothing; the page has 0 `article` elements (BASE/page/shop.html)"), "\(said)")
        #expect(said.contains("nodata: the page has no structured data (JSON-LD, microdata or OpenGraph) to make cards of; set options.item and options.title to CSS selectors (docs/html-sources.md) (BASE/page/table.html)"), "\(said)")
    }

    @Test func selectorsThatAreNotUnderstoodAreConfigErrors() async throws {
        let sources = [
            Self.entry("bad", "blog.html", "      item: \"article.post:hover\"\n      title: \"h2 a[href!=x]\"\n"),
            Self.entry("bad2", "blog.html", "      summary: \".teaser\"\n"),
        ]
        let (lines, run) = try await Self.lines(sources)
        #expect(lines.isEmpty)
        #expect(run.status == 2)
        // Each at the column of the character it goes wrong at: `      item: "article.post:hover"`'s `:` is column 26.
        #expect(run.stderrLines.contains { $0.contains(":26: sources[0].options.item:") }, "\(run.stderr)")
        #expect(run.stderrLines.contains { $0.contains(":24: sources[0].options.title:") }, "\(run.stderr)")
        let said = run.stderrLines.map { $0.replacingOccurrences(of: #"^.*Sources\.yml:"#, with: "Sources.yml:", options: .regularExpression) }
        let hint = " (CSS: type, .class, #id, [attr], [attr=v], descendant, >, +, ~, :first-child, :last-child, :nth-child(), :not(); or xpath:…; then @attr for an attribute)"
        #expect(said.contains { $0.hasSuffix(#"sources[0].options.item: "article.post:hover" at character 13: :hover is not supported (use :first-child, :last-child, :only-child, :nth-child(), :not())"# + hint) }, "\(said)")
        #expect(said.contains { $0.hasSuffix(#"sources[0].options.title: "h2 a[href!=x]" at character 10: expected ], =, ~=, |=, ^=, $= or *= in an attribute selector"# + hint) }, "\(said)")
        #expect(said.contains { $0.hasSuffix("sources[1].options.summary: needs item: the CSS selector (or xpath:) of each card on the page; without selectors the page's structured data makes the cards") }, "\(said)")
    }
}
