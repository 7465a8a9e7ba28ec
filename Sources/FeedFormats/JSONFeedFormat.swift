import FeedCore
import FeedSupport
import Foundation

/// JSON Feed 1.1 (https://jsonfeed.org/version/1.1): one item per card; the whole card
/// rides along as the `_aggregate` extension, with its links that are not web addresses
/// left out (a reader may render them).
public struct JSONFeedFormat: CardFormat {
    public static let name = "jsonfeed"
    public static let mediaType = "application/feed+json; charset=utf-8"
    public static let summary = "JSON Feed 1.1"

    public static let isFeed = true

    public init() {}

    private struct Feed: Encodable {
        var version = "https://jsonfeed.org/version/1.1"
        var title: String
        var home_page_url: URL?
        var feed_url: URL?
        var items: [Item]
    }

    private struct Item: Encodable {
        var id: String
        var url: URL?
        var title: String
        var content_html: String
        var content_text: String
        var summary: String?
        var image: URL?
        var date_published: String
        var authors: [Author]?
        var tags: [String]
        var attachments: [Attachment]?
        var _aggregate: Card
    }

    private struct Attachment: Encodable {
        var url: URL
        var mime_type: String
        var size_in_bytes: Int64?
    }

    private struct Author: Encodable {
        var name: String
        var url: URL?
        var avatar: URL?
    }

    public func write(_ document: FeedDocument, to out: inout FormattedOutput) {
        let feedDate = FeedEntry.feedDate(document)
        let items = document.cards.map { card in
            let entry = FeedEntry(card, in: document, feedDate: feedDate)
            return Item(id: entry.id, url: entry.url, title: card.title, content_html: entry.html, content_text: entry.text,
                        summary: card.summary, image: entry.image, date_published: RFC3339.string(from: entry.date),
                        authors: card.author.map { [Author(name: $0.name, url: entry.authorURL, avatar: entry.authorImage)] },
                        tags: [card.source] + card.tags,
                        attachments: entry.enclosures.isEmpty ? nil : entry.enclosures.map {
                            Attachment(url: $0.url, mime_type: $0.type, size_in_bytes: $0.length > 0 ? $0.length : nil)
                        },
                        _aggregate: WebLink.webOnly(card))
        }
        let feed = Feed(title: document.info.title, home_page_url: document.info.link, feed_url: document.info.selfURL,
                        items: items)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding cannot fail: every value is a string, number, bool, URL or card.
        out.write(bytes: Array((try? encoder.encode(feed)) ?? Data("{}".utf8)))
        out.write("\n")
    }
}
