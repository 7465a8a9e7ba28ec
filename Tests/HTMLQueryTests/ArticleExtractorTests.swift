@testable import ArticleExtraction
import Foundation
import HTMLQuery
import Testing

/// The article on a page (`full_content:`): each way `auto` looks, in its order, and a
/// selector's; what surrounds the article never comes with it.
@Suite struct ArticleExtractorTests {
    static let url = URL(string: "https://news.example/2026/12/story")!
    static let long = String(repeating: "Harbour news in many words. ", count: 10)

    static func article(_ html: String, selector: String? = nil) throws -> String {
        let page = try HTMLPage(Data(html.utf8), url: url)
        return try ArticleExtractor.article(of: page, selector: try selector.map { try HTMLQuery($0) })
    }

    static func expect(_ found: String, _ wanted: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(found == wanted, sourceLocation: sourceLocation)
    }

    @Test func theFixedQueriesAreRead() {
        #expect(ArticleExtractor.linkedData != nil && ArticleExtractor.articles != nil && ArticleExtractor.mains != nil)
        #expect(ArticleExtractor.paragraphParents != nil && ArticleExtractor.childParagraphs != nil)
    }

    @Test func linkedDataInAGraphComesFirstAndIsText() throws {
        let html = """
            <html><head><script type="application/ld+json">{"@graph":[{"@type":"WebPage"},{"@type":"BlogPosting",
            "articleBody":"\(Self.long)<script>alert(1)<\\/script>\\n\\nSecond paragraph."}]}</script></head>
            <body><article><p>\(Self.long)</p></article></body></html>
            """
        try Self.expect(Self.article(html), "<p>\(Self.long)&lt;script&gt;alert(1)&lt;/script&gt;</p><p>Second paragraph.</p>")
    }

    @Test func theLongestArticleElementThenMain() throws {
        let two = "<html><body><article><p>Teaser.</p></article><article><p>\(Self.long)</p><nav>x</nav></article></body></html>"
        try Self.expect(Self.article(two), "<p>\(Self.long)</p>\nx")
        // An article too short to be one (a teaser) gives way to <main>.
        let main = "<html><body><article><p>Teaser.</p></article><main><p>\(Self.long)</p></main></body></html>"
        try Self.expect(Self.article(main), "<p>\(Self.long)</p>")
    }

    @Test func theDensestBlockOfParagraphs() throws {
        let html = """
            <html><body><div id="menu"><p>Home</p><p>News</p></div>
            <div id="story"><p>\(Self.long)</p><p>More.</p></div><div><p>© 2026</p></div></body></html>
            """
        try Self.expect(Self.article(html), "<p>\(Self.long)</p>\n<p>More.</p>")
    }

    @Test func nothingFoundIsSaid() throws {
        #expect(throws: ArticleExtractor.Failure.noArticle) { try Self.article("<html><body><span>Only a span</span></body></html>") }
        #expect(throws: ArticleExtractor.Failure.noMatch(".entry")) { try Self.article("<html><body><p>Text</p></body></html>", selector: ".entry") }
        #expect(ArticleExtractor.Failure.noMatch(".entry").description == "`.entry` matched nothing with text")
    }

    @Test func aSelectorsMatchIsSanitizedWithLinksResolved() throws {
        let html = #"<html><body><div class="entry"><p onclick="x()">Read <a href="/more">more</a></p><script>alert(1)</script><style>p{}</style></div></body></html>"#
        try Self.expect(Self.article(html, selector: ".entry"), #"<p>Read <a href="https://news.example/more" rel="noopener noreferrer nofollow">more</a></p>"#)
    }
}
