import FeedCore
import FeedSupport
import Foundation

/// Atom 1.0 (RFC 4287): one `<entry>` per card.
public struct AtomFormat: CardFormat {
    public static let name = "atom"
    public static let mediaType = "application/atom+xml; charset=utf-8"
    public static let summary = "Atom 1.0 feed (RFC 4287)"

    public static let isFeed = true

    public init() {}

    public func write(_ document: FeedDocument, to out: inout FormattedOutput) {
        let info = document.info
        let feedDate = FeedEntry.feedDate(document)
        out.write("""
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom">
              <title type="text">\(XMLText.escape(info.title))</title>
              <id>\(XMLText.escape(FeedEntry.feedID(info)))</id>
              <updated>\(RFC3339.string(from: feedDate))</updated>

            """)
        if let link = info.link { out.write("  <link rel=\"alternate\" href=\"\(XMLText.escape(link.absoluteString))\"/>\n") }
        if let selfURL = info.selfURL {
            out.write("  <link rel=\"self\" type=\"application/atom+xml\" href=\"\(XMLText.escape(selfURL.absoluteString))\"/>\n")
        }
        out.write("""
              <author><name>\(XMLText.escape(info.title))</name></author>
              <generator version="\(AggregateVersion.current)">aggregate</generator>

            """)
        for card in document.cards {
            out.write(entry(FeedEntry(card, in: document, feedDate: feedDate)))
        }
        out.write("</feed>\n")
    }

    private func entry(_ entry: FeedEntry) -> String {
        let card = entry.card
        var lines = [
            "  <entry>",
            "    <id>\(XMLText.escape(entry.id))</id>",
            "    <title type=\"text\">\(XMLText.escape(card.title))</title>",
            "    <updated>\(RFC3339.string(from: entry.date))</updated>",
        ]
        if let published = card.published { lines.append("    <published>\(RFC3339.string(from: published))</published>") }
        if let url = entry.url { lines.append("    <link rel=\"alternate\" href=\"\(XMLText.escape(url.absoluteString))\"/>") }
        for file in entry.enclosures {
            lines.append("    <link rel=\"enclosure\" type=\"\(XMLText.escape(file.type))\" href=\"\(XMLText.escape(file.url.absoluteString))\""
                         + (file.length > 0 ? " length=\"\(file.length)\"" : "") + "/>")
        }
        if let image = entry.image, entry.enclosures.isEmpty {
            lines.append("    <link rel=\"enclosure\" type=\"\(entry.imageType)\" href=\"\(XMLText.escape(image.absoluteString))\"/>")
        }
        if let author = card.author {
            var person = "    <author><name>\(XMLText.escape(author.name))</name>"
            if let url = entry.authorURL { person += "<uri>\(XMLText.escape(url.absoluteString))</uri>" }
            lines.append(person + "</author>")
        }
        if let summary = card.summary { lines.append("    <summary type=\"text\">\(XMLText.escape(summary))</summary>") }
        lines.append("    <content type=\"html\">\(XMLText.escape(entry.html))</content>")
        // `scheme` says what vocabulary a term is from; `label` would be its name for people.
        lines.append("    <category term=\"\(card.kind.rawValue)\" scheme=\"\(FeedEntry.tagURI("kind"))\"/>")
        lines.append("    <category term=\"\(XMLText.escape(card.source))\" scheme=\"\(FeedEntry.tagURI("source"))\"/>")
        for tag in card.tags { lines.append("    <category term=\"\(XMLText.escape(tag))\"/>") }
        lines.append("  </entry>")
        return lines.joined(separator: "\n") + "\n"
    }
}
