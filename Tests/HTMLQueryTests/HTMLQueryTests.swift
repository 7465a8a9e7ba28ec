import Foundation
import HTMLQuery
import Testing

/// CSS selectors as XPath, and queries on pages as libxml2 recovers them.
@Suite struct HTMLQueryTests {
    static func page(_ html: String, contentType: String? = nil) throws -> HTMLPage {
        try HTMLPage(Data(html.utf8), url: URL(string: "https://shop.example/news/")!, contentType: contentType)
    }

    static func values(_ query: String, in page: HTMLPage) throws -> [String] {
        try HTMLQuery(query).values(under: #require(page.root))
    }

    @Test func selectorsTranslateAsCssselectDoes() throws {
        #expect(try CSSSelector("article.post").xpath
                == "descendant-or-self::article[@class and contains(concat(' ', normalize-space(@class), ' '), ' post ')]")
        #expect(try CSSSelector("#main > li + li").xpath
                == "descendant-or-self::*[@id = 'main']/li/following-sibling::*[1]/self::li")
        #expect(try CSSSelector("a[href^='/p/'], h2 ~ p").xpath
                == "descendant-or-self::a[starts-with(@href, '/p/')] | descendant-or-self::h2/following-sibling::p")
        #expect(try CSSSelector("tr:nth-child(2n+1):not(.ad)").xpath
                == "descendant-or-self::tr[((count(preceding-sibling::*) + 1) - 1) mod 2 = 0 and (count(preceding-sibling::*) + 1) >= 1][not(@class and contains(concat(' ', normalize-space(@class), ' '), ' ad '))]")
        #expect(try CSSSelector(#"[title="it's \"x\""]"#).xpath == #"descendant-or-self::*[@title = concat('it', "'", 's "x"')]"#)
    }

    @Test func unknownSelectorsAreRefusedWhereTheyGoWrong() {
        #expect(throws: CSSSelector.Problem(offset: 5, message: ":hover is not supported (use :first-child, :last-child, :only-child, :nth-child(), :not())")) {
            try CSSSelector("a.b c:hover")
        }
        #expect(throws: CSSSelector.Problem(offset: 2, message: "expected ], =, ~=, |=, ^=, $= or *= in an attribute selector")) {
            try CSSSelector("[a!=b]")
        }
        #expect(throws: CSSSelector.Problem(offset: 3, message: "a selector is empty here")) { try CSSSelector("a, , b") }
        #expect(throws: CSSSelector.Problem(offset: 8, message: "the XPath is not understood: invalid expression")) {
            try HTMLQuery("  xpath://div[")
        }
    }

    @Test func queriesReadBrokenMarkupAsBrowsersDo() throws {
        let page = try Self.page("""
            <html><head><title>News</title><style>.x{}</style></head><body>
            <div class="list"><article class="post" data-id="7"><h2><a href="/p/7">Seven <b>new</b></a></h2>
            <p class="teaser">Short<script>alert(1)</script> text</div>
            <article class="post" data-id="8"><h2><a href="p/8">Eight</a></h2></article></div></div>
            <table><tr><td>a</td></tr><tr><td>b</td></tr></table>
            """)
        #expect(try Self.values("article.post h2 a", in: page) == ["Seven new", "Eight"])
        #expect(try Self.values("article.post h2 a @href", in: page) == ["/p/7", "p/8"])
        #expect(try Self.values("article @data-id", in: page) == ["7", "8"])
        #expect(try Self.values(".teaser", in: page) == ["Short text"])
        #expect(try Self.values("xpath://table/tbody/tr/td", in: page) == ["a", "b"])
        #expect(try Self.values("xpath://table/tr[2]/td", in: page) == ["b"])
        #expect(try Self.values("tr:last-child td", in: page) == ["b"])
        let items = try HTMLQuery("article.post").values(under: #require(page.root))
        #expect(items.count == 2)
    }

    @Test func charsetsComeFromTheHeaderThenThePageThenUTF8() throws {
        let latin = Data([0x3C, 0x70, 0x3E]) + Data("Caf".utf8) + Data([0xE9, 0x20, 0x80]) + Data("</p>".utf8)
        let fromHeader = try HTMLPage(latin, url: URL(string: "https://a.example/")!, contentType: "text/html; charset=windows-1252")
        #expect(try Self.values("p", in: fromHeader) == ["Café €"])
        let declared = try HTMLPage(Data(#"<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">"#.utf8) + latin,
                                    url: URL(string: "https://a.example/")!)
        #expect(declared.charset == "windows-1252")
        #expect(try Self.values("p", in: declared) == ["Café €"])
        let japanese = Data(#"<meta charset="shift_jis"><p>"#.utf8) + Data([0x93, 0xFA, 0x96, 0x7B]) + Data("</p>".utf8)
        #expect(try Self.values("p", in: HTMLPage(japanese, url: URL(string: "https://a.example/")!)) == ["日本"])
        #expect(try Self.values("p", in: Self.page("<p>naïve</p>")) == ["naïve"])
    }

    @Test func noQueryNorPageCanStallAThread() throws {
        let cells = String(repeating: "<div><p>x</p><p>y</p></div>", count: 2_000)
        let page = try Self.page("<body>\(cells)</body>")
        let started = Date()
        #expect(throws: HTMLQuery.Failure.tooMuchWork("xpath://*[contains(., //*)]")) {
            try HTMLQuery("xpath://*[contains(., //*)]").values(under: #require(page.root))
        }
        #expect(Date().timeIntervalSince(started) < 5)
        // 3,000 open elements: libxml2 stops at 256 levels, so the page is refused, not
        // read in part; 200 levels are read (without recursion).
        #expect(throws: HTMLPage.Failure.tooDeep) { try Self.page(String(repeating: "<div>", count: 3_000) + "x") }
        let deep = try Self.page(String(repeating: "<div>", count: 200) + "x")
        #expect(try HTMLQuery("xpath://div[not(div)]").values(under: #require(deep.root)) == ["x"])
    }

    @Test func theBaseElementMovesWhereLinksResolve() throws {
        let page = try Self.page(#"<head><base href="https://cdn.example/shop/"></head><a href="x">x</a>"#)
        #expect(page.url.absoluteString == "https://cdn.example/shop/")
        let unsafe = try Self.page(#"<head><base href="javascript:alert(1)"></head>"#)
        #expect(unsafe.url.absoluteString == "https://shop.example/news/")
    }
}
