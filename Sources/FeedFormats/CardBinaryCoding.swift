import FeedCore
import Foundation

/// Cards in a compact layout of our own: length-prefixed UTF-8, decimals as sign, exponent
/// and 64-bit significand, dates as their seconds. The page memo keeps pages in it (a warm
/// run decodes 13,750 cards from it several times faster than `JSONDecoder` reads the same
/// cards as JSON, docs/performance.md), and a run that prints every card holds them in it
/// until it prints them (``PackedCards``). Every field of a card goes through; a memo blob
/// that does not decode is a cache miss, never an error.
///
/// Cards are written as lists: what every card of a list begins alike with (its source, the
/// head of its id, link and image: ``SharedPrefixes``) is written once for the list, and each
/// card keeps the rest. A shop page's 100 links differ only after `…/article/SKU-12-`, so a
/// card of it is about 90 bytes instead of 150.
package enum CardBinaryCoding {
    /// Bumped whenever the layout changes; part of every memo fingerprint.
    package static let layoutVersion = 4

    /// Writes `card` (its date first, so a run by date reads it in place; its kind as the
    /// index of `Card.Kind.allCases`, whose order is therefore part of the layout).
    package static func encode(_ card: Card, sharing shared: SharedPrefixes, into w: inout BinaryWriter) {
        w.flag(card.published != nil)
        if let published = card.published { w.double(published.timeIntervalSince1970) }
        w.string(card.source, after: shared.source)
        w.string(card.upstreamID, after: shared.upstreamID)
        w.int(Card.Kind.allCases.firstIndex(of: card.kind) ?? 0)
        w.string(card.title)
        w.optionalString(card.summary)
        price(card.price, into: &w)
        w.optionalString(card.image?.absoluteString, after: shared.image)
        w.optionalString(card.url?.absoluteString, after: shared.url)
        w.flag(card.author != nil)
        if let author = card.author {
            w.string(author.name)
            w.optionalString(author.image?.absoluteString)
            w.optionalString(author.url?.absoluteString)
        }
        w.int(card.tags.count)
        for tag in card.tags { w.string(tag) }
        w.value(.object(card.details))
        w.optionalString(card.origin?.rawValue)
        copies(card.also, into: &w)
        copies(card.offers, into: &w)
    }

    private static func price(_ price: Price?, into w: inout BinaryWriter) {
        w.flag(price != nil)
        guard let price else { return }
        w.decimal(price.amount)
        w.optionalString(price.currency)
        w.optionalString(price.display)
        w.optionalDecimal(price.regular)
        w.optionalDecimal(price.min)
        w.optionalDecimal(price.max)
    }

    private static func copies(_ copies: [Card.Copy]?, into w: inout BinaryWriter) {
        w.flag(copies != nil)
        guard let copies else { return }
        w.int(copies.count)
        for copy in copies {
            w.string(copy.source)
            w.string(copy.id)
            w.optionalString(copy.url?.absoluteString)
            price(copy.price, into: &w)
        }
    }

    private static func price(from r: inout BinaryReader) throws(BinaryReader.Malformed) -> Price? {
        guard try r.flag() else { return nil }
        return Price(amount: try r.decimal(), currency: try r.optionalString(), display: try r.optionalString(),
                     regular: try r.optionalDecimal(), min: try r.optionalDecimal(), max: try r.optionalDecimal())
    }

    private static func copies(from r: inout BinaryReader) throws(BinaryReader.Malformed) -> [Card.Copy]? {
        guard try r.flag() else { return nil }
        var copies: [Card.Copy] = []
        for _ in 0..<(try r.count()) {
            copies.append(Card.Copy(source: try r.string(), id: try r.string(), url: try r.optionalString().flatMap(URL.init(string:)),
                                    price: try price(from: &r)))
        }
        return copies
    }

    /// When the card `r` is at was published, read without making the card.
    package static func published(from r: inout BinaryReader) throws(BinaryReader.Malformed) -> Date? {
        try r.flag() ? Date(timeIntervalSince1970: try r.double()) : nil
    }

    /// The id of the card `r` is at, read without making the card.
    package static func id(from r: inout BinaryReader, sharing shared: SharedPrefixes) throws(BinaryReader.Malformed) -> String {
        _ = try published(from: &r)
        let source = try r.string(after: shared.source)
        return "\(source):\(try r.string(after: shared.upstreamID))"
    }

    /// The price's amount of the card `r` is at, read without making the card (a run by
    /// price orders packed cards by it).
    package static func priceAmount(from r: inout BinaryReader) throws(BinaryReader.Malformed) -> Decimal? {
        _ = try published(from: &r)
        for _ in 0..<2 { try r.skipString() }  // source, upstream id
        _ = try r.int()  // kind
        try r.skipString()  // title
        if try r.flag() { try r.skipString() }  // summary
        guard try r.flag() else { return nil }
        return try r.decimal()
    }

    package static func decodeCard(from r: inout BinaryReader, sharing shared: SharedPrefixes) throws(BinaryReader.Malformed) -> Card {
        let published = try published(from: &r)
        let source = try r.string(after: shared.source)
        let upstreamID = try r.string(after: shared.upstreamID)
        let kindIndex = try r.int()
        guard Card.Kind.allCases.indices.contains(kindIndex) else { throw .malformed }
        let kind = Card.Kind.allCases[kindIndex]
        let title = try r.string()
        let summary = try r.optionalString()
        let price = try price(from: &r)
        let image = try r.optionalString(after: shared.image).flatMap(URL.init(string:))
        let url = try r.optionalString(after: shared.url).flatMap(URL.init(string:))
        var author: Card.Author?
        if try r.flag() {
            author = Card.Author(name: try r.string(), image: try r.optionalString().flatMap(URL.init(string:)),
                                 url: try r.optionalString().flatMap(URL.init(string:)))
        }
        var tags: [String] = []
        for _ in 0..<(try r.count()) { tags.append(try r.string()) }
        guard case .object(let details) = try r.value() else { throw .malformed }
        var origin: Card.Origin?
        if let name = try r.optionalString() {
            guard let known = Card.Origin(rawValue: name) else { throw .malformed }
            origin = known
        }
        var card = Card(source: source, upstreamID: upstreamID, kind: kind, title: title, summary: summary, price: price,
                        image: image, url: url, author: author, published: published, tags: tags, details: details,
                        origin: origin)
        card.also = try copies(from: &r)
        card.offers = try copies(from: &r)
        return card
    }
}

/// The heads every card of one list shares, written once before the list (see
/// ``CardBinaryCoding``). Each is cut back to a whole Unicode scalar, so head and rest are
/// each valid UTF-8.
package struct SharedPrefixes: Sendable, Equatable {
    package var source = ""
    package var upstreamID = ""
    package var image = ""
    package var url = ""

    /// Nothing shared.
    package static let none = SharedPrefixes()

    /// The longest heads all of `cards` begin with (a field a card lacks takes no part).
    package init(of cards: [Card]) {
        source = Self.commonPrefix(cards.lazy.map(\.source))
        upstreamID = Self.commonPrefix(cards.lazy.map(\.upstreamID))
        image = Self.commonPrefix(cards.lazy.compactMap(\.image?.absoluteString))
        url = Self.commonPrefix(cards.lazy.compactMap(\.url?.absoluteString))
    }

    package init() {}

    package func write(into w: inout BinaryWriter) {
        for head in [source, upstreamID, image, url] { w.string(head) }
    }

    package init(from r: inout BinaryReader) throws(BinaryReader.Malformed) {
        source = try r.string()
        upstreamID = try r.string()
        image = try r.string()
        url = try r.string()
    }

    private static func commonPrefix(_ texts: some Sequence<String>) -> String {
        var iterator = texts.makeIterator()
        guard let first = iterator.next() else { return "" }
        var head = Array(first.utf8)
        while let text = iterator.next(), !head.isEmpty {
            var length = 0
            for byte in text.utf8 {
                guard length < head.count, head[length] == byte else { break }
                length += 1
            }
            head.removeSubrange(length...)
        }
        // Never end inside a scalar: drop continuation bytes (10xxxxxx) and their lead byte.
        while let last = head.last, last & 0x80 != 0 {
            let isLead = last & 0xC0 == 0xC0
            head.removeLast()
            if isLead { break }
        }
        return String(decoding: head, as: UTF8.self)
    }
}

/// Appends the memo layout's primitives.
package struct BinaryWriter {
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func int(_ value: Int) {
        var rest = UInt64(bitPattern: Int64(value))
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    package mutating func flag(_ value: Bool) { bytes.append(value ? 1 : 0) }

    package mutating func string(_ text: String) {
        int(text.utf8.count)
        bytes.append(contentsOf: text.utf8)
    }

    package mutating func optionalString(_ text: String?) {
        flag(text != nil)
        if let text { string(text) }
    }

    /// `text` without `head`, which it begins with (a list's ``SharedPrefixes``).
    package mutating func string(_ text: String, after head: String) {
        assert(text.utf8.starts(with: head.utf8), "a list's shared head is the head of each of its cards")
        let rest = text.utf8.dropFirst(head.utf8.count)
        int(rest.count)
        bytes.append(contentsOf: rest)
    }

    package mutating func optionalString(_ text: String?, after head: String) {
        flag(text != nil)
        if let text { string(text, after: head) }
    }

    package mutating func double(_ value: Double) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Sign, exponent and significand when it fits 64 bits, else the decimal's text.
    package mutating func decimal(_ value: Decimal) {
        if let (negative, significand, exponent) = DecimalText.parts(value) {
            bytes.append(negative ? 1 : 0)
            int(exponent)
            int(Int(bitPattern: UInt(significand)))
        } else {
            bytes.append(2)
            string(value.description)
        }
    }

    package mutating func optionalDecimal(_ value: Decimal?) {
        flag(value != nil)
        if let value { decimal(value) }
    }

    package mutating func value(_ value: JSONValue) {
        switch value {
        case .null: bytes.append(0)
        case .bool(let flag): bytes.append(flag ? 2 : 1)
        case .number(let number):
            bytes.append(3)
            decimal(number)
        case .string(let text):
            bytes.append(4)
            string(text)
        case .array(let elements):
            bytes.append(5)
            int(elements.count)
            for element in elements { self.value(element) }
        case .object(let members):
            bytes.append(6)
            int(members.count)
            for (key, member) in members {
                string(key)
                self.value(member)
            }
        }
    }
}

/// Reads what ``BinaryWriter`` wrote; anything out of place throws ``Malformed``.
package struct BinaryReader {
    package enum Malformed: Error { case malformed }

    private let bytes: [UInt8]
    private var offset: Int

    package init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    package var remaining: Int { bytes.count - offset }

    private mutating func byte() throws(Malformed) -> UInt8 {
        guard offset < bytes.count else { throw .malformed }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func int() throws(Malformed) -> Int {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            guard shift < 64 else { throw .malformed }
            result |= UInt64(next & 0x7F) << shift
            if next < 0x80 { return Int(Int64(bitPattern: result)) }
            shift += 7
        }
    }

    /// A number of elements to follow: each takes at least a byte, so never more than remain.
    package mutating func count() throws(Malformed) -> Int {
        let count = try int()
        guard count >= 0, count <= remaining else { throw .malformed }
        return count
    }

    package mutating func flag() throws(Malformed) -> Bool {
        switch try byte() {
        case 0: false
        case 1: true
        default: throw .malformed
        }
    }

    package mutating func string() throws(Malformed) -> String {
        let count = try self.count()
        defer { offset += count }
        return String(decoding: bytes[offset..<offset + count], as: UTF8.self)
    }

    package mutating func optionalString() throws(Malformed) -> String? {
        try flag() ? try string() : nil
    }

    /// A string written without `head` (``BinaryWriter/string(_:after:)``), whole again.
    package mutating func string(after head: String) throws(Malformed) -> String {
        head.isEmpty ? try string() : head + (try string())
    }

    package mutating func optionalString(after head: String) throws(Malformed) -> String? {
        try flag() ? try string(after: head) : nil
    }

    /// Steps over a string without making it.
    package mutating func skipString() throws(Malformed) {
        offset += try self.count()
    }

    package mutating func double() throws(Malformed) -> Double {
        guard remaining >= 8 else { throw .malformed }
        var bits: UInt64 = 0
        for index in 0..<8 { bits |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return Double(bitPattern: bits)
    }

    package mutating func decimal() throws(Malformed) -> Decimal {
        let tag = try byte()
        switch tag {
        case 0, 1:
            let exponent = try int()
            let significand = UInt64(UInt(bitPattern: try int()))
            return Decimal(sign: tag == 1 ? .minus : .plus, exponent: exponent, significand: Decimal(significand))
        case 2:
            guard let value = Decimal(plainText: try string()) else { throw .malformed }
            return value
        default:
            throw .malformed
        }
    }

    package mutating func optionalDecimal() throws(Malformed) -> Decimal? {
        try flag() ? try decimal() : nil
    }

    package mutating func value(depth: Int = 0) throws(Malformed) -> JSONValue {
        guard depth < 64 else { throw .malformed }
        switch try byte() {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3: return .number(try decimal())
        case 4: return .string(try string())
        case 5:
            let count = try self.count()
            var elements: [JSONValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(try value(depth: depth + 1)) }
            return .array(elements)
        case 6:
            let count = try self.count()
            var members: [String: JSONValue] = [:]
            members.reserveCapacity(count)
            for _ in 0..<count {
                let key = try string()
                members[key] = try value(depth: depth + 1)
            }
            return .object(members)
        default:
            throw .malformed
        }
    }
}
