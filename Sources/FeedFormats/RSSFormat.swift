import FeedCore
import Foundation

/// RSS 2.0: one `<item>` per card.
public struct RSSFormat: CardFormat {
    public static let name = "rss"
    public static let mediaType = "application/rss+xml; charset=utf-8"
    public static let summary = "RSS 2.0 feed"

    public static let isFeed = true

    public init() {}

    /// RSS requires a channel link; this one stands in when Sources.yml's `feed.link` is unset.
    static let defaultLink = "http://127.0.0.1/"

    public func write(_ document: FeedDocument, to out: inout FormattedOutput) {
        let info = document.info
        let feedDate = FeedEntry.feedDate(document)
        let link = info.link?.absoluteString ?? info.selfURL?.absoluteString ?? Self.defaultLink
        out.write("""
            <?xml version="1.0" encoding="utf-8"?>
            <rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:content="http://purl.org/rss/1.0/modules/content/">
            <channel>
              <title>\(XMLText.escape(info.title))</title>
              <link>\(XMLText.escape(link))</link>
              <description>\(XMLText.escape(info.title)): every card aggregate merged</description>
              <lastBuildDate>\(RFC822.string(from: feedDate))</lastBuildDate>
              <generator>aggregate \(AggregateVersion.current)</generator>

            """)
        if let selfURL = info.selfURL {
            out.write("  <atom:link href=\"\(XMLText.escape(selfURL.absoluteString))\" rel=\"self\" type=\"application/rss+xml\"/>\n")
        }
        for card in document.cards {
            out.write(item(FeedEntry(card, in: document, feedDate: feedDate)))
        }
        out.write("</channel>\n</rss>\n")
    }

    private func item(_ entry: FeedEntry) -> String {
        let card = entry.card
        var lines = [
            "  <item>",
            "    <title>\(XMLText.escape(card.title))</title>",
            "    <guid isPermaLink=\"false\">\(XMLText.escape(entry.id))</guid>",
            "    <pubDate>\(RFC822.string(from: entry.date))</pubDate>",
            // With content: the summary here, the content in content:encoded.
            "    <description>\(XMLText.escape(entry.content != nil ? card.summary.map { "<p>\(XMLText.escape($0))</p>" } ?? entry.html : entry.html))</description>",
        ]
        if entry.content != nil { lines.append("    <content:encoded>\(XMLText.escape(entry.html))</content:encoded>") }
        if let url = entry.url { lines.append("    <link>\(XMLText.escape(url.absoluteString))</link>") }
        // RSS has one enclosure: the first file (a podcast's episode), else the image.
        if let file = entry.enclosures.first {
            lines.append("    <enclosure url=\"\(XMLText.escape(file.url.absoluteString))\" length=\"\(file.length)\" type=\"\(XMLText.escape(file.type))\"/>")
        } else if let image = entry.image {
            // RSS requires a length; 0 says "unknown" (the image is not fetched to count it).
            lines.append("    <enclosure url=\"\(XMLText.escape(image.absoluteString))\" length=\"0\" type=\"\(entry.imageType)\"/>")
        }
        if let author = card.author { lines.append("    <dc:creator>\(XMLText.escape(author.name))</dc:creator>") }
        lines.append("    <category>\(XMLText.escape(card.source))</category>")
        for tag in card.tags { lines.append("    <category>\(XMLText.escape(tag))</category>") }
        lines.append("  </item>")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// RFC 822 dates as RSS 2.0 writes them: `Mon, 18 Apr 2022 15:24:03 +0000`, always UTC.
enum RFC822 {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func string(from date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .gmt
        let c = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return "\(days[((c.weekday ?? 1) - 1) % 7]), \(two(c.day)) \(months[((c.month ?? 1) - 1) % 12]) \(c.year ?? 1970) "
            + "\(two(c.hour)):\(two(c.minute)):\(two(c.second)) +0000"
    }
}
