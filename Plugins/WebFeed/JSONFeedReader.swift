import FeedCore
import FeedSupport
import Foundation

/// JSON Feed 1.0 and 1.1 (https://jsonfeed.org/version/1.1): read leniently, field by
/// field, so one item of the wrong shape costs that item's field, not the feed.
enum JSONFeedReader {
    /// Whether `text` claims to be a JSON Feed: an object naming jsonfeed.org (its
    /// `version`, slashes escaped or not).
    static func looksLikeJSONFeed(_ text: String) -> Bool {
        text.hasPrefix("{") && text.contains("jsonfeed.org")
    }

    /// The feed's first `limit` items: the rest are not built (a feed of a million items
    /// costs what its first `max_items` cost).
    static func read(_ body: Data, url: URL, limit: Int = .max, json: any JSONBodyReader) throws -> ParsedFeed {
        let root = try json.value(from: body, keepingAtMost: max(1, limit), ofListAt: ["items"])
        guard case .object(let feedObject) = root else {
            throw SourceError.undecodable(path: "$", reason: "a JSON Feed is an object")
        }
        var feed = ParsedFeed(format: .jsonFeed)
        feed.title = feedObject["title"]?.stringValue
        feed.author = name(feedObject)
        feed.next = feedObject["next_url"]?.stringValue.flatMap { XMLFeedReader.web($0, base: url) }
        guard case .array(let items)? = feedObject["items"] else {
            throw SourceError.undecodable(path: "items", reason: "a JSON Feed has a list of items")
        }
        let base = feedObject["home_page_url"]?.stringValue.flatMap { URL(string: $0) } ?? url
        for case .object(let item) in items {
            var entry = ParsedEntry()
            entry.id = item["id"]?.text
            entry.title = item["title"]?.stringValue
            entry.titleIsHTML = false
            entry.link = (item["url"] ?? item["external_url"])?.stringValue.flatMap { XMLFeedReader.web($0, base: base) }
            entry.contentHTML = item["content_html"]?.stringValue ?? item["content_text"]?.stringValue.map { XMLFeedReader.escaped($0) }
            entry.summaryHTML = item["summary"]?.stringValue.map { XMLFeedReader.escaped($0) }
            entry.author = name(item)
            entry.published = item["date_published"]?.stringValue.map(DateText.init)
            entry.updated = item["date_modified"]?.stringValue.map(DateText.init)
            for key in ["image", "banner_image"] {
                if let image = item[key]?.stringValue.flatMap({ XMLFeedReader.web($0, base: base) }) { entry.images.append(image) }
            }
            if case .array(let tags)? = item["tags"] { entry.categories = tags.compactMap(\.stringValue) }
            if case .array(let attachments)? = item["attachments"] {
                for case .object(let attachment) in attachments {
                    guard let url = attachment["url"]?.stringValue.flatMap({ XMLFeedReader.web($0, base: base) }) else { continue }
                    let length = attachment["size_in_bytes"]?.text.flatMap { Int($0) }
                    entry.enclosures.append(Enclosure(url: url, type: attachment["mime_type"]?.stringValue, length: length))
                }
            }
            feed.entries.append(entry)
        }
        return feed
    }

    /// `authors[0].name` (1.1) or `author.name` (1.0).
    static func name(_ object: [String: JSONValue]) -> String? {
        if case .array(let authors)? = object["authors"], case .object(let first)? = authors.first {
            return first["name"]?.stringValue
        }
        if case .object(let author)? = object["author"] { return author["name"]?.stringValue }
        return nil
    }
}

extension JSONValue {
    /// The value as text: a string, or a number written out (ids are often numbers).
    var text: String? {
        switch self {
        case .string(let text): text
        case .number(let number): "\(number)"
        default: nil
        }
    }
}
