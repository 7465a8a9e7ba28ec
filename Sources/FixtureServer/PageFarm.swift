import FeedCore
import FixtureKit
import Foundation

/// `--pages N`: N made-up shop list pages on `/pages/<n>.html` for the `html` benchmark,
/// 100 items each in the markup real shops have (a head with styles and scripts, a
/// navigation, product cards with a linked title, a shown price, a picture, a description,
/// a date, ratings and buttons, a footer): 60–90 KB a page. The same `n` always gives the
/// same bytes; pages are made once, at start, and served as stored bytes. Each item links to
/// its own page, `/pages/article/<sku>.html`: a product story of about 20 KB between the
/// shop's navigation, related items and reviews (made when asked), for `full_content:`.
public struct PageFarm: FixtureUpstream {
    public let name = "pages"
    public static let itemsPerPage = 100
    private let documents: [Data]

    public init(count: Int) {
        documents = (0..<count).map { Data(Self.page($0).utf8) }
    }

    public func respond(to request: FixtureRequest) -> FixtureResponse? {
        if request.path.hasPrefix("/article/SKU-"), request.path.hasSuffix(".html") {
            let numbers = request.path.dropFirst("/article/SKU-".count).dropLast(5).split(separator: "-").compactMap { Int($0) }
            guard numbers.count == 2, documents.indices.contains(numbers[0]), (0..<Self.itemsPerPage).contains(numbers[1]) else { return nil }
            return FixtureResponse(status: 200, contentType: "text/html; charset=utf-8", body: Data(Self.article(numbers[0], numbers[1]).utf8))
        }
        guard request.path.hasPrefix("/"), request.path.hasSuffix(".html"),
              let number = Int(request.path.dropFirst().dropLast(5)), documents.indices.contains(number) else { return nil }
        return FixtureResponse(status: 200, contentType: "text/html; charset=utf-8", body: documents[number])
    }

    /// The selectors the benchmark's contenders use on these pages, one per field.
    public static let selectors = (item: "li.product-card", title: "h3.title a", link: "h3.title a @href",
                                   price: "span.price", id: "@data-sku", date: "time @datetime")

    static func page(_ number: Int) -> String {
        let navigation = (0..<40).map { #"<li class="nav-item"><a href="/c/\#($0)">Category \#($0)</a></li>"# }.joined()
        let items = (0..<itemsPerPage).map { item(number, $0) }.joined(separator: "\n")
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>Shop page \(number)</title>
            <style>.product-card{display:flex}.price{font-weight:bold}.rating span{color:gold}</style>
            <script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments)}</script>
            </head><body><header class="site-header"><nav><ul class="nav">\(navigation)</ul></nav>
            <form class="search"><input type="search" name="q"><button>Search</button></form></header>
            <main><h1>Kitchen, page \(number + 1)</h1><ul class="products">
            \(items)
            </ul><nav class="pagination"><a rel="prev" href="/pages/\(max(number - 1, 0)).html">Previous</a></nav></main>
            <footer><p>© Example Shop</p><script src="/static/app.js"></script></footer></body></html>
            """
    }

    /// Item `index` of page `number` on a page of its own: the story in `<article>`, twelve
    /// paragraphs, among everything a shop's page has around it.
    static func article(_ number: Int, _ index: Int) -> String {
        let navigation = (0..<40).map { #"<li class="nav-item"><a href="/c/\#($0)">Category \#($0)</a></li>"# }.joined()
        let paragraphs = (0..<12).map { "<p>\(FeedFarm.sentence(number &* 131 &+ index &* 7 &+ $0, words: 45).capitalized).</p>" }.joined(separator: "\n")
        let related = (0..<20).map { #"<li><a href="/pages/article/SKU-\#(number)-\#(($0 + index + 1) % itemsPerPage).html">Related \#($0)</a></li>"# }.joined()
        let reviews = (0..<8).map { "<div class=\"review\"><p>\(FeedFarm.sentence(index &+ $0, words: 20))</p></div>" }.joined()
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>Item \(index) of page \(number)</title>
            <style>.product-card{display:flex}.price{font-weight:bold}.rating span{color:gold}</style>
            <script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments)}</script>
            </head><body><header class="site-header"><nav><ul class="nav">\(navigation)</ul></nav></header>
            <main><article class="story"><h1>\(FeedFarm.sentence(number + index, words: 5).capitalized) \(index)</h1>
            \(paragraphs)
            </article><aside><h2>Related</h2><ul>\(related)</ul></aside><section class="reviews">\(reviews)</section></main>
            <footer><p>© Example Shop</p><script src="/static/app.js"></script></footer></body></html>
            """
    }

    static func item(_ number: Int, _ index: Int) -> String {
        let sku = "SKU-\(number)-\(index)"
        let pence = (number &* 7_919 &+ index &* 104_729) % 200_000 + 199
        let price = "£\(pence / 100 >= 1000 ? "\(pence / 100_000),\(String(format: "%03d", pence / 100 % 1000))" : "\(pence / 100)").\(String(format: "%02d", pence % 100))"
        let day = 1 + (number + index) % 28
        let words = FeedFarm.sentence(number &* 13 &+ index, words: 24)
        return """
            <li class="product-card" data-sku="\(sku)"><div class="media"><img src="/img/\(sku).jpg" alt="" loading="lazy" width="240" height="240"></div>\
            <div class="body"><h3 class="title"><a href="/pages/article/\(sku).html">\(FeedFarm.sentence(number + index, words: 5).capitalized) \(index)</a></h3>\
            <p class="desc">\(words)</p><div class="rating"><span>★★★★</span><span class="count">(\(index * 3 + 1))</span></div>\
            <span class="price">\(price)</span> <time datetime="2026-10-\(String(format: "%02d", day))T12:00:00Z">\(day) Oct</time>\
            <button class="add" data-sku="\(sku)">Add to basket</button></div></li>
            """
    }
}
