import FeedCore
import Foundation

/// A feed document as read, whatever its format: what the card mapping works from.
struct ParsedFeed: Sendable {
    enum Format: String, Sendable {
        case rss2 = "RSS 2.0", rss1 = "RSS 1.0", atom = "Atom 1.0", atom03 = "Atom 0.3", jsonFeed = "JSON Feed"
        /// Microsoft's Channel Definition Format: `<CHANNEL><ITEM HREF=…><TITLE>`.
        case cdf = "CDF"
    }

    var format: Format
    var title: String?
    /// The feed's own author, for entries that name none.
    var author: String?
    /// RFC 5005 `rel="next"` (or JSON Feed's `next_url`): the next archive page.
    var next: URL?
    /// The channel's `dc:date`: the date of its items that have none of their own.
    var date: DateText?
    var entries: [ParsedEntry] = []
}

/// One entry (RSS item, Atom entry, JSON Feed item) as written, before it becomes a card.
struct ParsedEntry: Sendable {
    var id: String?
    var title: String?
    /// Whether ``title`` is HTML (Atom `type="html"`/`"xhtml"`, and RSS, where titles
    /// often carry escaped markup) rather than plain text.
    var titleIsHTML = true
    var link: URL?
    /// Whether ``link`` is an alternate of a type other than HTML, to be replaced by an
    /// HTML one that follows.
    var linkIsProvisional = false
    var summaryHTML: String?
    var contentHTML: String?
    var author: String?
    var published: DateText?
    var updated: DateText?
    var images: [URL] = []
    var enclosures: [Enclosure] = []
    var categories: [String] = []
    var comments: URL?
}

/// A date as the feed wrote it, kept until it is read (so a note can quote it).
struct DateText: Sendable {
    var text: String
}

/// An enclosure: a podcast episode's audio, an image, a file.
struct Enclosure: Sendable, Equatable {
    var url: URL
    var type: String?
    var length: Int?
}
