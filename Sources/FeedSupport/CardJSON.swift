import FeedCore
import Foundation

// The card's JSON form (the JSONL line's fields, docs/cards.md) and the one date format
// cards use. Here rather than in FeedCore: a source builds cards, the engine and the
// `exec` plugin read and write their text.

extension Card {
    /// Whether the item can be bought now, where its source says: `details.in_stock`, or
    /// the opposite of `details.out_of_stock` (both booleans). Digests' `back_in_stock`
    /// reads it.
    public var inStock: Bool? {
        if case .bool(let inStock)? = details["in_stock"] { return inStock }
        if case .bool(let outOfStock)? = details["out_of_stock"] { return !outOfStock }
        return nil
    }
}

extension Card: Codable {
    enum CodingKeys: String, CodingKey {
        case v, id, source, kind, title, summary, price, image, url, author, published, tags, details, origin, also, offers
    }

    public init(from decoder: any Decoder) throws {
        // Read in the order the fields are written, so the first bad one is the one named.
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let id = try c.decode(String.self, forKey: .id)
        let source = try c.decode(String.self, forKey: .source)
        let kind = try c.decode(Kind.self, forKey: .kind)
        let title = try c.decode(String.self, forKey: .title)
        let summary = try c.decodeIfPresent(String.self, forKey: .summary)
        let price = try c.decodeIfPresent(Price.self, forKey: .price)
        let image = try c.decodeIfPresent(URL.self, forKey: .image)
        let url = try c.decodeIfPresent(URL.self, forKey: .url)
        let author = try c.decodeIfPresent(Author.self, forKey: .author)
        var published: Date?
        if let text = try c.decodeIfPresent(String.self, forKey: .published) {
            guard let date = RFC3339.date(from: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .published, in: c, debugDescription: "not an RFC 3339 date: \(text)")
            }
            published = date
        }
        let tags = try c.decodeIfPresent([String].self, forKey: .tags) ?? []
        let details = try c.decodeIfPresent([String: JSONValue].self, forKey: .details) ?? [:]
        let origin = try c.decodeIfPresent(Origin.self, forKey: .origin)
        self.init(source: source, upstreamID: "", kind: kind, title: title, summary: summary, price: price, image: image, url: url,
                  author: author, published: published, tags: tags, details: details, origin: origin)
        // The id as written: a stored card's id need not start with its source.
        self.id = id
        also = try c.decodeIfPresent([Copy].self, forKey: .also)
        offers = try c.decodeIfPresent([Copy].self, forKey: .offers)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Card.schemaVersion, forKey: .v)
        try c.encode(id, forKey: .id)
        try c.encode(source, forKey: .source)
        try c.encode(kind, forKey: .kind)
        try c.encode(title, forKey: .title)
        try c.encodeIfPresent(summary, forKey: .summary)
        try c.encodeIfPresent(price, forKey: .price)
        try c.encodeIfPresent(image, forKey: .image)
        try c.encodeIfPresent(url, forKey: .url)
        try c.encodeIfPresent(author, forKey: .author)
        try c.encodeIfPresent(published.map(RFC3339.string(from:)), forKey: .published)
        try c.encode(tags, forKey: .tags)
        if !details.isEmpty { try c.encode(details, forKey: .details) }
        try c.encodeIfPresent(origin, forKey: .origin)
        try c.encodeIfPresent(also, forKey: .also)
        try c.encodeIfPresent(offers, forKey: .offers)
    }
}

/// RFC 3339 timestamps in UTC, the only date format cards use.
public enum RFC3339 {
    /// `2022-04-18T15:24:03Z`, with milliseconds (`.123`) only when the date has them.
    public static func string(from date: Date) -> String {
        // Rounded to the millisecond, not cut: `.123` parsed is 0.12299… seconds as a
        // Double, which cut would write as `.122`.
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        // From 1583 to 9999, nearly every card's date, written here: the format style
        // costs more than the rest of a JSON line. Earlier dates go through it, which
        // writes them in the Julian calendar.
        if let count = Int64(exactly: milliseconds), (-12_212_553_600_000 ..< 253_402_300_800_000).contains(count) {
            let whole = count >= 0 ? count / 1000 : (count - 999) / 1000
            let fraction = Int(count - whole * 1000)
            let text = wholeSeconds(whole)
            guard fraction != 0 else { return text }
            let digits = String(fraction + 1000).dropFirst()
            return text.dropLast() + "." + digits + "Z"
        }
        let whole = date.timeIntervalSince1970.rounded(.down) == date.timeIntervalSince1970
        return date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: !whole)
            .timeZone(separator: .omitted).dateSeparator(.dash).timeSeparator(.colon).dateTimeSeparator(.standard))
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` of whole seconds since 1970.
    static func wholeSeconds(_ count: Int64) -> String {
        let days = Int(count >= 0 ? count / 86_400 : (count - 86_399) / 86_400)
        let time = Int(count) - days * 86_400
        let (year, month, day) = CivilDays.civil(fromDays: days)
        return String(unsafeUninitializedCapacity: 20) { buffer in
            func put(_ value: Int, width: Int, at start: Int) {
                var rest = value
                for index in (start ..< start + width).reversed() {
                    buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
            }
            put(year, width: 4, at: 0)
            put(month, width: 2, at: 5)
            put(day, width: 2, at: 8)
            put(time / 3600, width: 2, at: 11)
            put(time / 60 % 60, width: 2, at: 14)
            put(time % 60, width: 2, at: 17)
            for (index, separator) in [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "Z")] as [(Int, Unicode.Scalar)] {
                buffer[index] = UInt8(ascii: separator)
            }
            return 20
        }
    }

    /// Parses ISO 8601 / RFC 3339 timestamps with an offset (`Z`, `+00:00`), with or
    /// without fractional seconds.
    public static func date(from text: String) -> Date? {
        if let date = commonDate(text) { return date }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fff]` with `Z` or `±HH:MM`, from 1583 to 9999 and every field
    /// in range: the form this program writes, read without the format style. Every
    /// stored card's dates are read for every page a reader loads, and the style's first
    /// parse loads ICU's calendar and time-zone data (half a millisecond of a 20 ms
    /// `--stored` run). Anything else, even valid, is nil here and left to the style,
    /// so what is accepted and how it reads does not change.
    static func commonDate(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            guard bytes.count >= 20 else { return nil }
            func number(_ start: Int, _ count: Int) -> Int? {
                var value = 0
                for index in start ..< start + count {
                    let digit = bytes[index] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int(digit)
                }
                return value
            }
            guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
                  bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
                  let year = number(0, 4), (1583...9999).contains(year), let month = number(5, 2), (1...12).contains(month),
                  let day = number(8, 2), day >= 1, day <= CivilDays.length(ofMonth: month, in: year),
                  let hour = number(11, 2), hour < 24, let minute = number(14, 2), minute < 60,
                  let second = number(17, 2), second < 60 else { return nil }
            var index = 19
            var milliseconds = 0
            if bytes[index] == UInt8(ascii: ".") {
                // At most three digits: a millisecond is what the writer keeps; a finer
                // fraction is the style's to round.
                let digits = bytes[(index + 1)...].prefix { $0 &- UInt8(ascii: "0") < 10 }.count
                guard (1...3).contains(digits), let fraction = number(index + 1, digits) else { return nil }
                milliseconds = fraction * [100, 10, 1][digits - 1]
                index += 1 + digits
            }
            var offset = 0
            switch bytes.count - index {
            case 1 where bytes[index] == UInt8(ascii: "Z"):
                break
            case 6 where (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) && bytes[index + 3] == UInt8(ascii: ":"):
                guard let hours = number(index + 1, 2), hours < 24, let minutes = number(index + 4, 2), minutes < 60 else { return nil }
                offset = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
            default:
                return nil
            }
            let days = CivilDays.days(fromCivil: year, month: month, day: day)
            // Counted from 2001 as `Date` keeps it, in milliseconds, divided once: the
            // nearest Double, which is what the style reads (from 1970 it is not, in the last bit).
            let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset - 978_307_200
            return Date(timeIntervalSinceReferenceDate: Double(seconds * 1000 + milliseconds) / 1000)
        }
    }
}
