import FeedCore
import FeedSupport
import Foundation

/// Cards as JSON Lines: sorted keys, unescaped slashes, exact decimals, UTF-8.
///
/// Written straight into bytes instead of through `JSONEncoder`: on a 13,750-card `--all`
/// the encoder's generic `Codable` path was a third of the run. The output is the same,
/// byte for byte, as `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]`
/// (`JSONLinesTests` holds the two side by side over every recorded card).
public enum JSONLines {
    /// One card's line, without the newline.
    public static func line(for card: Card) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        append(card, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `card`'s line (without the newline) to `out`; with `kept`, the card
    /// store's dates go with it (`first_seen`, `last_seen`, `gone_since`).
    public static func append(_ card: Card, kept: KeptDates? = nil, to out: inout [UInt8]) {
        var writer = JSONByteWriter(bytes: out)
        out = []
        writer.card(card, kept: kept)
        out = writer.bytes
    }

    /// `price` as its card's line writes it.
    public static func text(of price: Price) -> String {
        var writer = JSONByteWriter()
        writer.price(price)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// `value` as compact JSON with sorted keys.
    public static func text(of value: JSONValue) -> String {
        var writer = JSONByteWriter()
        writer.value(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

/// Appends JSON text to a byte buffer. Keys of a card's own objects are written in sorted
/// order by hand; `details` objects are sorted the way `JSONEncoder` sorts them.
struct JSONByteWriter {
    var bytes: [UInt8]
    private var needsComma = false

    init(bytes: [UInt8] = []) {
        self.bytes = bytes
    }

    mutating func card(_ card: Card, kept: KeptDates? = nil) {
        beginObject()
        if let also = card.also {
            key("also")
            copies(also)
        }
        if let author = card.author {
            key("author")
            beginObject()
            if let image = author.image { field("image", image.absoluteString) }
            field("name", author.name)
            if let url = author.url { field("url", url.absoluteString) }
            endObject()
        }
        if !card.details.isEmpty {
            key("details")
            value(.object(card.details))
        }
        if let kept {
            field("first_seen", RFC3339.string(from: kept.firstSeen))
            if let gone = kept.goneSince { field("gone_since", RFC3339.string(from: gone)) }
        }
        field("id", card.id)
        if let image = card.image { field("image", image.absoluteString) }
        field("kind", card.kind.rawValue)
        if let kept { field("last_seen", RFC3339.string(from: kept.lastSeen)) }
        if let offers = card.offers {
            key("offers")
            copies(offers)
        }
        if let origin = card.origin { field("origin", origin.rawValue) }
        if let price = card.price {
            key("price")
            self.price(price)
        }
        if let published = card.published { field("published", RFC3339.string(from: published)) }
        if let read = kept?.readAt { field("read_at", RFC3339.string(from: read)) }
        field("source", card.source)
        if let starred = kept?.starredAt { field("starred_at", RFC3339.string(from: starred)) }
        if let summary = card.summary { field("summary", summary) }
        key("tags")
        array(card.tags.map(JSONValue.string))
        field("title", card.title)
        if let url = card.url { field("url", url.absoluteString) }
        key("v")
        raw(String(Card.schemaVersion))
        endObject()
    }

    /// `[{id, price, source, url}]`, keys sorted as everywhere.
    private mutating func copies(_ copies: [Card.Copy]) {
        bytes.append(UInt8(ascii: "["))
        for (index, copy) in copies.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            beginObject()
            field("id", copy.id)
            if let price = copy.price {
                key("price")
                self.price(price)
            }
            field("source", copy.source)
            if let url = copy.url { field("url", url.absoluteString) }
            endObject()
        }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    mutating func price(_ price: Price) {
        beginObject()
        key("amount"); number(price.amount)
        if let currency = price.currency { field("currency", currency) }
        if let display = price.display { field("display", display) }
        if let max = price.max { key("max"); number(max) }
        if let min = price.min { key("min"); number(min) }
        if let regular = price.regular { key("regular"); number(regular) }
        endObject()
    }

    mutating func value(_ value: JSONValue) {
        switch value {
        case .string(let text): string(text)
        case .number(let number): self.number(number)
        case .bool(let flag): raw(flag ? "true" : "false")
        case .null: raw("null")
        case .array(let elements): array(elements)
        case .object(let members):
            beginObject()
            for (name, member) in members.sorted(by: { Self.encoderKeyOrder($0.key, $1.key) }) {
                key(name)
                self.value(member)
            }
            endObject()
        }
    }

    /// `JSONEncoder`'s `.sortedKeys` order: UTF-8 bytes compared in order (`a10` < `a9`).
    static func encoderKeyOrder(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    private mutating func array(_ elements: [JSONValue]) {
        bytes.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            value(element)
        }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    private mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    private mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    private mutating func key(_ name: String) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        string(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    private mutating func field(_ name: String, _ text: String) {
        key(name)
        string(text)
    }

    private mutating func number(_ decimal: Decimal) {
        raw(DecimalText.string(decimal))
    }

    private mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        needsComma = true
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Whether any byte is `"`, `\` or a control character: eight bytes at a time.
    static func needsEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress else { return false }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var index = 0
        while utf8.count - index >= 8 {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            // Exact for ASCII bytes; a word with non-ASCII bytes is checked byte by byte.
            let flagged = ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash | (word &- ones &* 0x20) & ~word) & highs
            if flagged != 0 || word & highs != 0 {
                for offset in index..<index + 8 where Self.escapes(base[offset]) { return true }
            }
            index += 8
        }
        for offset in index..<utf8.count where Self.escapes(base[offset]) { return true }
        return false
    }

    @inline(__always)
    private static func escapes(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Quotes and escapes as `JSONEncoder` does: `"` and `\`, and control characters
    /// (the short forms where JSON has them, else `\u00XX`); everything else as UTF-8.
    private mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        // Most text needs no escape: copy it whole.
        let copied = text.utf8.withContiguousStorageIfAvailable { utf8 in
            guard !Self.needsEscape(utf8) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied == true {
            bytes.append(UInt8(ascii: "\""))
            needsComma = true
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                          Self.hexDigits[Int(byte >> 4)], Self.hexDigits[Int(byte & 0x0F)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }
}
