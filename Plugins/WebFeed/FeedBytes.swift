import FeedSupport
import FeedCore
import Foundation

/// A feed body made fit for an XML parser, as liberal feed readers do: its encoding
/// found (byte order mark, XML declaration, or detected: UTF-8, else windows-1252) and
/// turned into UTF-8; what comes before `<` dropped (a BOM, blank lines); the HTML named
/// entities XML does not declare (`&eacute;`) written as numeric references, and a bare
/// `&` (`AT&T`) escaped. CDATA sections and comments are left as they are.
enum FeedBytes {
    /// The document as UTF-8 text, its declaration saying so.
    static func text(_ body: Data) -> String {
        var text = decode(body)
        if let start = text.firstIndex(where: { !$0.isWhitespace && $0 != "\u{FEFF}" }) { text.removeSubrange(..<start) }
        // The parser is given UTF-8: a declaration naming another encoding would mislead it.
        if text.hasPrefix("<?xml"), let end = text.range(of: "?>"), let value = encodingValue(in: text[..<end.upperBound]) {
            text.replaceSubrange(value, with: "UTF-8")
        }
        return text
    }

    /// The body decoded by its byte order mark, its declared encoding, or what it is.
    static func decode(_ body: Data) -> String {
        let bytes = [UInt8](body.prefix(4))
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return String(decoding: body.dropFirst(3), as: UTF8.self) }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0x00, 0x3C, 0x00, 0x3F]) {
            return String(data: body.starts(with: [0xFE, 0xFF]) ? body.dropFirst(2) : body, encoding: .utf16BigEndian) ?? ""
        }
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0x3C, 0x00, 0x3F, 0x00]) {
            return String(data: body.starts(with: [0xFF, 0xFE]) ? body.dropFirst(2) : body, encoding: .utf16LittleEndian) ?? ""
        }
        let declared = declaredEncoding(body)
        let singleByte = ["iso-8859-1", "latin1", "iso8859-1", "windows-1252", "cp1252", "iso-8859-15", "us-ascii", "ascii"]
        if let declared, singleByte.contains(declared) { return windows1252(body) }
        // Declared UTF-8 (or nothing) but not UTF-8: the usual culprit is windows-1252.
        return String(validating: body, as: UTF8.self) ?? windows1252(body)
    }

    /// `encoding="…"` of the XML declaration, lower-cased.
    static func declaredEncoding(_ body: Data) -> String? {
        let head = String(decoding: body.prefix(200), as: UTF8.self)
        guard head.hasPrefix("<?xml"), let end = head.range(of: "?>"), let value = encodingValue(in: head[..<end.upperBound]) else {
            return nil
        }
        return head[value].lowercased()
    }

    /// Where the value of `encoding="…"` is in an XML declaration.
    static func encodingValue(in declaration: Substring) -> Range<String.Index>? {
        guard let name = declaration.range(of: "encoding") else { return nil }
        var rest = declaration[name.upperBound...].drop { $0.isWhitespace }
        guard rest.first == "=" else { return nil }
        rest = rest.dropFirst().drop { $0.isWhitespace }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        let value = rest.dropFirst()
        guard let close = value.firstIndex(of: quote) else { return nil }
        return value.startIndex..<close
    }

    /// windows-1252 (a superset of ISO-8859-1 in practice, as HTML treats it).
    static func windows1252(_ body: Data) -> String {
        let high: [UInt32] = [
            0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
            0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
        ]
        var scalars = String.UnicodeScalarView()
        for byte in body {
            let value = (0x80...0x9F).contains(byte) ? high[Int(byte) - 0x80] : UInt32(byte)
            if let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
        }
        return String(scalars)
    }

    /// The UTF-8 bytes of `text` for the XML parser, with every `&` that does not start an
    /// XML reference made one: HTML named entities become numeric references, anything else
    /// `&amp;`. CDATA sections and comments are copied as they are. A feed of 50 KB has
    /// thousands of `&`, nearly all `&lt;`/`&amp;`: the bytes are copied in runs between the
    /// few references that change, and not at all when none does.
    static func xmlReferences(_ text: String) -> Data {
        let bytes = Array(text.utf8)
        do {
            var out: Data?
            var copied = 0
            func replace(_ range: Range<Int>, with replacement: String) {
                if out == nil { out = Data(capacity: bytes.count + bytes.count / 16) }
                out?.append(contentsOf: bytes[copied..<range.lowerBound])
                out?.append(contentsOf: Array(replacement.utf8))
                copied = range.upperBound
            }
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                guard byte == ascii("&") else {
                    // Only `<!` can open a CDATA section or a comment.
                    let skip = byte == ascii("<") && index + 1 < bytes.count && bytes[index + 1] == ascii("!")
                    index = skip ? skipped(bytes, at: index) ?? index + 1 : index + 1
                    continue
                }
                // A reference is a name of at most 12 bytes ended by `;`.
                var stop = index + 1
                while stop < bytes.count, stop - index <= 12, bytes[stop] != ascii(";"), bytes[stop] > 0x20,
                      bytes[stop] != ascii("&"), bytes[stop] != ascii("<") {
                    stop += 1
                }
                guard stop < bytes.count, bytes[stop] == ascii(";"), stop > index + 1 else {
                    replace(index..<(index + 1), with: "&amp;")
                    index += 1
                    continue
                }
                let name = bytes[(index + 1)..<stop]
                if !isXMLReference(name) {
                    let text = String(decoding: name, as: UTF8.self)
                    if let decoded = HTMLEntities.character(text[...]), let scalar = decoded.unicodeScalars.first {
                        replace(index..<(stop + 1), with: "&#\(scalar.value);")
                    } else {
                        replace(index..<(index + 1), with: "&amp;")
                    }
                }
                index = stop + 1
            }
            guard var out else { return Data(bytes) }
            out.append(contentsOf: bytes[copied...])
            return out
        }
    }

    private static func ascii(_ character: Unicode.Scalar) -> UInt8 { UInt8(ascii: character) }

    /// Whether `name` (between `&` and `;`) is one XML knows: the five predefined entities
    /// or a numeric reference to a character XML allows.
    private static func isXMLReference(_ name: ArraySlice<UInt8>) -> Bool {
        if isPredefined(name) { return true }
        guard name.first == ascii("#"), name.count > 1 else { return false }
        let second = name[name.startIndex + 1]
        let hex = second == ascii("x") || second == ascii("X")
        let digits = name.dropFirst(hex ? 2 : 1)
        guard !digits.isEmpty, digits.count <= 8 else { return false }
        var value: UInt32 = 0
        for digit in digits {
            guard let number = hexDigit(digit), hex || number < 10 else { return false }
            value = value * (hex ? 16 : 10) + UInt32(number)
        }
        // XML 1.0 Char: tab, newline, return, and from space up, without surrogates.
        return value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value)
            || (0xE000...0xFFFD).contains(value) || (0x10000...0x10FFFF).contains(value)
    }

    /// `amp`, `lt`, `gt`, `quot` or `apos`: a feed of 50 KB has thousands of them.
    private static func isPredefined(_ name: ArraySlice<UInt8>) -> Bool {
        let at = name.startIndex
        return switch name.count {
        case 2: (name[at] == ascii("l") || name[at] == ascii("g")) && name[at + 1] == ascii("t")
        case 3: name[at] == ascii("a") && name[at + 1] == ascii("m") && name[at + 2] == ascii("p")
        case 4: name.elementsEqual("quot".utf8) || name.elementsEqual("apos".utf8)
        default: false
        }
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case ascii("0")...ascii("9"): byte - ascii("0")
        case ascii("a")...ascii("f"): byte - ascii("a") + 10
        case ascii("A")...ascii("F"): byte - ascii("A") + 10
        default: nil
        }
    }

    /// The end of a CDATA section or comment starting at `index`, which are copied whole.
    private static func skipped(_ bytes: [UInt8], at index: Int) -> Int? {
        guard index + 1 < bytes.count, bytes[index + 1] == ascii("!") else { return nil }
        let rest = bytes[index...]
        let close: String
        if rest.starts(with: "<![CDATA[".utf8) { close = "]]>" } else if rest.starts(with: "<!--".utf8) { close = "-->" } else { return nil }
        let closeBytes = Array(close.utf8)
        var search = index + 4
        while search + closeBytes.count <= bytes.count {
            if bytes[search] == closeBytes[0], bytes[search..<(search + closeBytes.count)].elementsEqual(closeBytes) {
                return search + closeBytes.count
            }
            search += 1
        }
        return bytes.count
    }

    /// The feeds an HTML page advertises (`<link rel="alternate" type="application/rss+xml"
    /// href="…" title="…">`), resolved against `base`: web addresses only, each once, at
    /// most 20 (a page is hostile text like any other).
    static func advertisedFeeds(in html: String, base: URL) -> [AdvertisedFeed] {
        var feeds: [AdvertisedFeed] = []
        var search = html[...]
        while feeds.count < 20, let start = search.range(of: "<link", options: .caseInsensitive),
              let close = search[start.upperBound...].firstIndex(of: ">") {
            let tag = search[start.upperBound..<close]
            let rel = HTMLText.attribute("rel", in: tag)?.lowercased() ?? ""
            let type = HTMLText.attribute("type", in: tag)?.lowercased() ?? ""
            if rel.split(separator: " ").contains("alternate"),
               ["application/rss+xml", "application/atom+xml", "application/feed+json", "application/json"].contains(type),
               let href = HTMLText.attribute("href", in: tag), let url = URL(string: href, relativeTo: base)?.absoluteURL,
               url.isWebAddress, !feeds.contains(where: { $0.url == url }) {
                let title = HTMLText.attribute("title", in: tag).map { String(HTMLText.plain($0).prefix(200)) }
                feeds.append(AdvertisedFeed(url: url, title: title?.isEmpty == false ? title : nil))
            }
            search = search[close...]
        }
        return feeds
    }

    /// Whether `text` is an HTML page rather than a feed.
    static func isHTML(_ text: String) -> Bool {
        let head = text.prefix(512).lowercased()
        return head.hasPrefix("<!doctype html") || head.hasPrefix("<html") || (head.contains("<html") && !head.contains("<rss")
            && !head.contains("<feed") && !head.contains("<rdf"))
    }
}
