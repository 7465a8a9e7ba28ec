import FeedCore
import FeedSupport
import Foundation
import HTMLQuery

/// `plugin: html`: any web page as a source. With `item:` and field selectors (CSS, or
/// XPath after `xpath:`), one card per item; without, the page's structured data
/// (JSON-LD, microdata, OpenGraph) makes the cards — a shop's product page becomes one
/// card with its price. `next:` walks further pages, on the same host, under the usual
/// budgets. Pages are read by libxml2's HTML parser (``HTMLPage``), in their charset.
public struct WebPageSource: PageSource {
    public static let plugin = "html"

    /// Hand-written pages in the shapes real sites have (Snapshots/README.md says which);
    /// a source pointed at one of these URLs is served them offline.
    public static let snapshots = [
        RecordedResponse(url: "https://blog.example.org/news/", bytes: PackageResources.blog_html),
        RecordedResponse(url: "https://shop.example.com/grid", bytes: PackageResources.shop_html),
    ]

    let settings: SourceSettings
    let http: any HTTPTransport
    let options: WebPageOptions

    public init(settings: SourceSettings, http: any HTTPTransport) throws {
        self.settings = settings
        self.http = http
        options = try WebPageOptions(settings)
    }

    public func page(after cursor: String?) async throws -> SourcePage {
        let url = cursor.flatMap { URL(string: $0) } ?? settings.url
        let response = try await http.get(url)
        guard response.isSuccess else { throw SourceError.badStatus(response.status) }
        let contentType = response.headers.first { $0.key.lowercased() == "content-type" }?.value
        let page: HTMLPage
        do {
            page = try HTMLPage(response.body, url: response.url, contentType: contentType)
        } catch {
            throw SourceError.failed(response.body.isEmpty ? "the page is empty" : error.description)
        }
        guard let root = page.root else { throw SourceError.failed("the page is empty") }
        var notes: [String] = []
        let cards: [Card]
        var skipped: [SkippedRecord] = []
        if let item = options.item {
            (cards, skipped) = try PageCards(sourceID: settings.id, options: options).cards(on: page, root: root, item: item)
        } else {
            guard let found = StructuredData(sourceID: settings.id, page: page, json: settings.json, currency: options.currency).cards(under: root) else {
                throw SourceError.failed("the page has no structured data (JSON-LD, microdata or OpenGraph) to make cards of; "
                    + "set options.item and options.title to CSS selectors (docs/html-sources.md)")
            }
            cards = found.cards
        }
        var next: String?
        if let query = options.next, let text = try PageCards.answer({ try query.first(under: root) }),
           let address = StructuredData.link(text, base: page.url), address != url {
            if address.host?.lowercased() == url.host?.lowercased() {
                next = address.absoluteString
            } else {
                notes.append("the next page \(address.redactedString) is on another host; not followed")
            }
        }
        return SourcePage(cards: Array(cards.prefix(settings.maxItems)), next: next, skipped: skipped, notes: notes)
    }
}
