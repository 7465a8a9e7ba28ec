import FeedCore
import FeedSupport
import Foundation

/// What the three feed formats (Atom, JSON Feed, RSS) say about one card, worked out once.
struct FeedEntry {
    let card: Card
    /// Stable across runs: a `tag:` URI (RFC 4151) of the card id.
    let id: String
    /// `published`, else when this state first saw the card, else the feed's date: never
    /// "now" on every run, so readers do not show old cards as new.
    let date: Date
    let priceText: String?
    /// The card's links that may become links in a feed: web addresses only (``WebLink``).
    let url: URL?
    let image: URL?
    let authorURL: URL?
    let authorImage: URL?
    /// The body of a post (`details.content`), as the allow-list keeps it.
    let content: String?
    /// Its files (`details.enclosures`), web addresses only.
    let enclosures: [FeedEnclosure]

    init(_ card: Card, in document: FeedDocument, feedDate: Date) {
        self.card = card
        url = WebLink.web(card.url)
        image = WebLink.web(card.image)
        authorURL = WebLink.web(card.author?.url)
        authorImage = WebLink.web(card.author?.image)
        id = FeedEntry.tagURI("card/" + FeedEntry.encodedSegment(card.id))
        date = card.published ?? document.firstSeen[card.id] ?? feedDate
        content = card.details["content"]?.stringValue.map { HTMLSanitizer.clean($0) }.flatMap(\.nonEmpty)
        if case .array(let files)? = card.details["enclosures"] {
            enclosures = files.compactMap { file in
                guard case .object(let fields) = file, let url = WebLink.web(fields["url"]?.stringValue.flatMap { URL(string: $0) }) else { return nil }
                let length = fields["length"].flatMap { value -> Int64? in
                    if case .number(let number) = value { return NSDecimalNumber(decimal: number).int64Value }
                    return nil
                }
                return FeedEnclosure(url: url, type: fields["type"]?.stringValue ?? "application/octet-stream", length: max(0, length ?? 0))
            }
        } else {
            enclosures = []
        }
        priceText = card.price.map { price in
            var text = price.label
            if let regular = price.regular, regular != price.amount {
                text += " (was \(Money.format(regular, currency: price.currency)))"
            }
            return text
        }
    }

    static func tagURI(_ specific: String) -> String {
        "tag:aggregate,2026:\(specific)"
    }

    /// RFC 3986 `pchar`s kept (`:` and `@` included), everything else percent-encoded.
    static func encodedSegment(_ text: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// The entry's body as HTML: summary, price, tags, image. A fragment that lives inside
    /// XML, escaped by XML's rules; whole pages are Mustache templates. (Rendered through a
    /// template per entry it made an Atom dump of 13,750 cards 30% slower, side by side.)
    var html: String {
        var parts: [String] = []
        // A post's content says what its summary does, and more.
        if let content { parts.append(content) } else if let summary = card.summary { parts.append("<p>\(XMLText.escape(summary))</p>") }
        if let priceText { parts.append("<p><strong>\(XMLText.escape(priceText))</strong></p>") }
        if !card.tags.isEmpty { parts.append("<p>\(card.tags.map(XMLText.escape).joined(separator: " · "))</p>") }
        if let image, content == nil { parts.append("<p><img src=\"\(XMLText.escape(image.absoluteString))\" alt=\"\"></p>") }
        return parts.isEmpty ? "<p>\(XMLText.escape(card.title))</p>" : parts.joined()
    }

    /// The same as plain text.
    var text: String {
        ([card.summary, priceText, card.tags.isEmpty ? nil : card.tags.joined(separator: " · ")].compactMap { $0 })
            .joined(separator: "\n").nonEmpty ?? card.title
    }

    /// A guess at the image's media type from its extension (enclosures must state one).
    var imageType: String {
        switch image?.pathExtension.lowercased() {
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "svg": "image/svg+xml"
        case "avif": "image/avif"
        default: "image/jpeg"
        }
    }

    /// The feed's date: `updated` if set, else the newest entry date, else a fixed epoch
    /// (an empty feed must still be byte-stable for conditional GETs).
    static func feedDate(_ document: FeedDocument) -> Date {
        document.info.updated
            ?? document.cards.compactMap { $0.published ?? document.firstSeen[$0.id] }.max()
            ?? Date(timeIntervalSince1970: 0)
    }

    static func feedID(_ info: FeedInfo) -> String {
        info.id ?? tagURI("feed/" + encodedSegment(info.title))
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}

/// Text inside XML: escaped, and stripped of characters XML 1.0 cannot carry at all.
package enum XMLText {
    /// `text` with XML's five special characters as entities, and the characters XML 1.0
    /// cannot hold (controls but tab, line feed and return; U+FFFE, U+FFFF) left out. On
    /// UTF-8 bytes: escaping scalar by scalar into a `String` was a fifth of serving a feed.
    package static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: needsWork) else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "&"): out += "&amp;".utf8
            case UInt8(ascii: "<"): out += "&lt;".utf8
            case UInt8(ascii: ">"): out += "&gt;".utf8
            case UInt8(ascii: "\""): out += "&quot;".utf8
            case UInt8(ascii: "'"): out += "&apos;".utf8
            case UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): out.append(byte)
            case ..<0x20: continue
            case 0xEF where index + 1 < bytes.count && bytes[index] == 0xBF && (bytes[index + 1] == 0xBE || bytes[index + 1] == 0xBF):
                // U+FFFE or U+FFFF.
                index += 2
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func needsWork(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""), UInt8(ascii: "'"), 0xEF: true
        case UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): false
        default: byte < 0x20
        }
    }
}

/// A card as a feed entry shows it — its body as HTML (summary or the allow-listed content,
/// price, tags, image), its web link, its date — for answers shaped like a feed that are
/// not one of the formats (the Google Reader API's items).
/// A card's file (`details.enclosures`: a podcast's episode) as every feed gives it.
public struct FeedEnclosure: Sendable {
    /// A web address only (``WebLink``).
    public var url: URL
    public var type: String
    /// Bytes, 0 when unknown.
    public var length: Int64
}

public struct EntryParts: Sendable {
    public let html: String
    /// A web address only (``WebLink``).
    public let url: URL?
    /// `published`, else when the store first saw the card.
    public let date: Date
    public let enclosures: [FeedEnclosure]

    public init(_ card: Card, firstSeen: Date) {
        let entry = FeedEntry(card, in: FeedDocument(cards: [card], firstSeen: [card.id: firstSeen]), feedDate: firstSeen)
        html = entry.html
        url = entry.url
        date = entry.date
        enclosures = entry.enclosures
    }
}
