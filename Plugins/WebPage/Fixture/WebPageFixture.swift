import FeedCore
import FixtureKit
import Foundation
import WebPage

/// Web pages on `/page/…` for `plugin: html`, each a shape real sites have:
///
/// - `/blog.html` (and `?page=2`): a blog's list with `rel="next"` (the snapshot)
/// - `/shop.html`: a shop grid with JSON-LD offers (the snapshot)
/// - `/table.html`: a list as table rows, written without `<tbody>`
/// - `/latin.html`: windows-1252 bytes, the charset in the header only
/// - `/sjis.html`: Shift_JIS bytes, the charset in `<meta>` only
/// - `/broken.html`: unclosed tags and stray end tags
/// - `/product.html`: one product page, JSON-LD and OpenGraph; `/og.html`: OpenGraph only;
///   `/micro.html`: microdata products
/// - `/huge.html`: 20,000 items; `/deep.html`: 3,000 nested elements
/// - `/article/ld.html`, `/article/tag.html`, `/article/dense.html`: whole articles as
///   JSON-LD `articleBody`, an `<article>`, and the densest block of paragraphs;
///   `/article/entry.html?n=N`: one in `.entry-content` (for `full_content:`)
/// - `/store/a.html`, `/store/b.html`: one product (one GTIN) at two shops' prices
public struct WebPageFixture: FixtureUpstream {
    public let name = "page"

    public func respond(to request: FixtureRequest) -> FixtureResponse? {
        switch request.path {
        case "/blog.html":
            return request.query["page"] == "2" ? Self.html(Self.blogPage2) : Self.body(WebPageSource.snapshots[0].body, type: "text/html")
        case "/shop.html": return Self.body(WebPageSource.snapshots[1].body, type: "text/html; charset=utf-8")
        case "/table.html": return Self.html(Self.table)
        case "/latin.html": return Self.body(Self.latin, type: "text/html; charset=windows-1252")
        case "/sjis.html": return Self.body(Self.shiftJIS, type: "text/html")
        case "/broken.html": return Self.html(Self.broken)
        case "/product.html": return Self.html(Self.product)
        case "/og.html": return Self.html(Self.openGraph)
        case "/micro.html": return Self.html(Self.microdata)
        case "/huge.html": return Self.html(Self.huge)
        case "/article/ld.html": return Self.html(ArticlePages.linkedData)
        case "/article/tag.html": return Self.html(ArticlePages.articleElement)
        case "/article/dense.html": return Self.html(ArticlePages.densest)
        case "/article/entry.html": return Self.html(ArticlePages.entry(request.query["n"] ?? "0"))
        case "/store/a.html": return Self.html(Self.store(sku: "Q45-A", price: "699.00"))
        case "/store/b.html": return Self.html(Self.store(sku: "4471", price: "649.00"))
        case "/deep.html": return Self.html(String(repeating: "<div>", count: 3_000) + "<article class=\"post\"><h2>Deep</h2></article>")
        default: return nil
        }
    }

    /// One shop's page of the Quiet 45 dishwasher (its GTIN), at its own price and SKU.
    static func store(sku: String, price: String) -> String {
        """
        <html><head><script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Quiet 45 dishwasher",
        "sku":"\(sku)","gtin13":"5012345678900","offers":{"@type":"Offer","price":"\(price)","priceCurrency":"GBP"}}</script></head>
        <body><h1>Quiet 45 dishwasher</h1></body></html>
        """
    }

    static func html(_ text: String) -> FixtureResponse {
        body(Data(text.utf8), type: "text/html; charset=utf-8")
    }

    static func body(_ data: Data, type: String) -> FixtureResponse {
        FixtureResponse(status: 200, contentType: type, body: data)
    }

    static let blogPage2 = """
        <html><body><main>
        <article class="post" data-id="1039"><h2><a href="/news/ferry">Winter ferry timetable</a></h2><time datetime="2026-11-12T08:00:00Z"></time></article>
        <article class="post" data-id="1038"><h2><a href="/news/choir">The harbour choir sings</a></h2><time datetime="2026-11-05T19:00:00Z"></time></article>
        </main></body></html>
        """

    /// Rows of a table, as a browser's inspector shows them with a `<tbody>` the page lacks.
    static let table = """
        <html><body><table id="releases">
        <tr><th>Version</th><th>Date</th></tr>
        <tr><td><a href="/v/2.4">2.4.0</a></td><td>03.11.2026</td></tr>
        <tr><td><a href="/v/2.3">2.3.1</a></td><td>17.09.2026</td></tr>
        </table></body></html>
        """

    /// `<li>Café crème – 3,50 €</li><li>Señor</li>` in windows-1252.
    static let latin = Data("<html><body><ul class=\"menu\"><li data-id=\"1\">".utf8)
        + Data([67, 97, 102, 233, 32, 99, 114, 232, 109, 101, 32, 150, 32, 51, 44, 53, 48, 32, 128])
        + Data("</li><li data-id=\"2\">".utf8) + Data([83, 101, 241, 111, 114]) + Data("</li></ul></body></html>".utf8)

    /// `日本のニュース` and `東京タワー` in Shift_JIS, the charset declared by the page.
    static let shiftJIS = Data("<html><head><meta charset=\"Shift_JIS\"></head><body><h3 class=\"t\">".utf8)
        + Data([147, 250, 150, 123, 130, 204, 131, 106, 131, 133, 129, 91, 131, 88])
        + Data("</h3><h3 class=\"t\">".utf8) + Data([147, 140, 139, 158, 131, 94, 131, 143, 129, 91]) + Data("</h3></body></html>".utf8)

    static let broken = """
        <html><body><div class="list">
        <div class="entry"><a href="/a">First <b>bold</a></div></div></div>
        <div class="entry"><a href="/b">Second<p>unclosed paragraph
        <div class="entry"><a href="/c">Third</a>
        </span></body>
        """

    static let product = """
        <html><head><title>Quiet 45</title>
        <meta property="og:title" content="Quiet 45 dishwasher (OpenGraph)">
        <meta property="product:price:amount" content="1">
        <script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"WebPage","name":"x"},
        {"@type":"Product","name":"Quiet 45 dishwasher","gtin13":"5012345678900","description":"<p>Runs at 42 dB.</p>",
         "image":{"@type":"ImageObject","url":"/img/q45.jpg"},"brand":{"@type":"Brand","name":"Nordic"},
         "offers":{"@type":"Offer","price":1249.5,"priceCurrency":"GBP"}}]}</script>
        </head><body><h1>Quiet 45</h1></body></html>
        """

    static let openGraph = """
        <html><head><meta property="og:title" content="Espresso grinder"><meta property="og:type" content="product">
        <meta property="og:url" content="/p/grinder"><meta property="og:image" content="/img/grinder.jpg">
        <meta property="product:price:amount" content="189,90"><meta property="product:price:currency" content="EUR">
        </head><body></body></html>
        """

    static let microdata = """
        <html><body>
        <div itemscope itemtype="https://schema.org/Product"><span itemprop="name">Steel pan</span><meta itemprop="sku" content="PAN-1">
          <div itemprop="offers" itemscope itemtype="https://schema.org/Offer"><span itemprop="price" content="39.00">€39</span><meta itemprop="priceCurrency" content="EUR"></div></div>
        <div itemscope itemtype="https://schema.org/Product"><span itemprop="name">Cast iron lid</span><meta itemprop="sku" content="LID-2">
          <div itemprop="offers" itemscope itemtype="https://schema.org/Offer"><span itemprop="price">12.00</span><meta itemprop="priceCurrency" content="EUR"></div></div>
        </body></html>
        """

    static let huge = "<html><body>" + (0..<20_000).map { "<article class=\"post\" data-id=\"\($0)\"><h2><a href=\"/h/\($0)\">Item \($0)</a></h2></article>" }.joined() + "</body></html>"
}

extension WebPageSource: BuiltinSource {
    public static func fixture(_ options: FixtureOptions) -> any FixtureUpstream {
        WebPageFixture()
    }

    /// The blog list with every field, and the shop grid by its structured data; off in the
    /// standard fixture world (as the feeds are), on in the conformance suite.
    public static let fixtureSources = [
        FixtureSourceEntry(id: "page-blog", plugin: plugin, path: "/page/blog.html", route: "page", extraYAML: """
                enabled: false
                options:
                  item: "article.post:not(.ad)"
                  title: "h2 a"
                  link: "h2 a @href"
                  date: "time @datetime"
                  summary: ".teaser"
                  content: ".body"
                  image: "img @src"
                  author: ".author"
                  id: "@data-id"
                  next: "a[rel=next] @href"

            """),
        FixtureSourceEntry(id: "page-shop", plugin: plugin, path: "/page/shop.html", route: "page", extraYAML: "    enabled: false\n"),
    ]
}
