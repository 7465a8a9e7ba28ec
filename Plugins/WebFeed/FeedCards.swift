import FeedCore
import FeedSupport
import Foundation

/// Entries as cards, field by field as the README's table says.
struct FeedCards {
    let sourceID: String
    let kind: Card.Kind
    /// Characters of plain text a summary keeps (cut at a word boundary).
    let summaryLength: Int
    /// Tags every card of the source gets (an OPML folder), after the entry's own.
    let tags: [String]

    /// Words of the text that stand in for a missing title.
    static let titleWords = 10

    func cards(_ feed: ParsedFeed, url: URL, notes: inout [String]) -> [Card] {
        var seen: Set<String> = []
        var cards: [Card] = []
        // Held until the run prints: sized once, not doubled past the entries (a card is 320 bytes).
        cards.reserveCapacity(feed.entries.count)
        for entry in feed.entries {
            let card = card(entry, feed: feed, url: url, notes: &notes)
            guard seen.insert(card.id).inserted else {
                notes.append("entry id \(card.upstreamID) appears more than once; the first is kept")
                continue
            }
            cards.append(card)
        }
        return cards
    }

    func card(_ entry: ParsedEntry, feed: ParsedFeed, url feedURL: URL, notes: inout [String]) -> Card {
        // An id that is itself an absolute web address is a link too (never a relative one:
        // `small-batch-112` is a name, not a path).
        let link = entry.link ?? entry.id.flatMap { URL(string: $0) }.flatMap(XMLFeedReader.web)
        let bodyHTML = entry.contentHTML ?? entry.summaryHTML
        let summaryHTML = entry.summaryHTML ?? entry.contentHTML
        var summaryText = summaryHTML.map { HTMLText.plain($0, atLeast: summaryLength) } ?? ""
        var title = entry.title.map { entry.titleIsHTML ? HTMLText.plain($0) : HTMLText.collapse($0) } ?? ""
        if title.isEmpty, let bodyHTML {
            // The first 500 characters nearly always hold eleven words; if not, all of it.
            var text = HTMLText.plain(bodyHTML, atLeast: 500)
            if text.split(separator: " ").count <= Self.titleWords { text = HTMLText.plain(bodyHTML) }
            title = HTMLText.firstWords(text, Self.titleWords)
        }
        if title.isEmpty { title = link?.absoluteString ?? "Untitled" }
        // A summary that only repeats the title is left out; a long one, read in part, is
        // read whole to tell.
        if let summaryHTML, title.hasPrefix(summaryText), HTMLText.isLonger(summaryText, than: summaryLength) { summaryText = HTMLText.plain(summaryHTML) }
        let date = readDate(entry.published, notes: &notes) ?? readDate(entry.updated, notes: &notes)
        var card = Card(
            source: sourceID, upstreamID: Self.upstreamID(entry, link: link), kind: kind, title: title,
            summary: summaryText.isEmpty || summaryText == title ? nil : HTMLText.cut(summaryText, to: summaryLength),
            image: image(entry, html: bodyHTML, base: link ?? feedURL), url: link,
            author: (entry.author ?? feed.author).flatMap { $0.isEmpty ? nil : Card.Author(name: $0) },
            published: date, tags: Self.unique(entry.categories.map(HTMLText.collapse) + tags))
        var details: [String: JSONValue] = [:]
        if !entry.enclosures.isEmpty {
            details["enclosures"] = .array(entry.enclosures.map { enclosure in
                var object: [String: JSONValue] = ["url": .string(enclosure.url.absoluteString)]
                if let type = enclosure.type { object["type"] = .string(type) }
                if let length = enclosure.length { object["length"] = .number(Decimal(length)) }
                return .object(object)
            })
        }
        // The body, kept as HTML a reader can show: only what the allow-list keeps
        // (HTMLSanitizer). Most feeds put the whole post in the RSS description or the Atom
        // summary; it is the body unless the card's summary already says all it says (plain
        // text, not cut).
        let summaryIsAll = entry.summaryHTML.map { !$0.contains("<") && !HTMLText.isLonger(summaryText, than: summaryLength) } ?? true
        if let body = entry.contentHTML ?? (summaryIsAll ? nil : entry.summaryHTML),
           case let content = HTMLSanitizer.clean(body, base: link ?? feedURL), !content.isEmpty {
            details["content"] = .string(content)
        }
        if let comments = entry.comments { details["comments"] = .string(comments.absoluteString) }
        card.details = details
        return card
    }

    /// The entry's own id (guid, Atom id, JSON Feed id), else its link, else a hash of
    /// link, title and date: stable across runs, never a position.
    static func upstreamID(_ entry: ParsedEntry, link: URL?) -> String {
        if let id = entry.id.map(HTMLText.collapse), !id.isEmpty { return id }
        if let link { return link.absoluteString }
        let seed = [entry.link?.absoluteString, entry.title, entry.published?.text ?? entry.updated?.text]
            .map { $0 ?? "" }.joined(separator: "\n")
        return "hash-" + String(FNV1a.hash(seed), radix: 16)
    }

    /// An image enclosure, a media thumbnail or content, the iTunes image, else the first
    /// `<img>` of the content; absolute.
    func image(_ entry: ParsedEntry, html: String?, base: URL) -> URL? {
        if let image = entry.enclosures.first(where: { $0.type?.hasPrefix("image/") == true })?.url { return image }
        if let image = entry.images.first { return image }
        return html.flatMap(HTMLText.firstImage).flatMap { XMLFeedReader.web($0, base: base) }
    }

    func readDate(_ text: DateText?, notes: inout [String]) -> Date? {
        guard let text, !text.text.isEmpty else { return nil }
        guard let date = FeedDates.date(text.text) else {
            notes.append("date \"\(text.text)\" cannot be read; the entry has no date")
            return nil
        }
        return date
    }

    static func unique(_ tags: [String]) -> [String] {
        var seen: Set<String> = []
        return tags.filter { !$0.isEmpty && seen.insert($0).inserted }
    }
}
