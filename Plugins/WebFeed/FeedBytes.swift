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

    /// `text` with every `&` that does not start an XML reference made one: HTML named
    /// entities become numeric references, anything else `&amp;`. Works on the UTF-8
    /// bytes: a feed of 50 KB has thousands of `&`.
    static func xmlReferences(_ text: String) -> String {
        var bytes = Array(text.utf8)
        guard bytes.contains(UInt8(ascii: "&")) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 16)
        let ampersand = UInt8(ascii: "&"), semicolon = UInt8(ascii: ";"), less = UInt8(ascii: "<")
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == less, let end = skipped(bytes, at: index) {
                out.append(contentsOf: bytes[index..<end])
                index = end
                continue
            }
            guard byte == ampersand else {
                out.append(byte)
                index += 1
                continue
            }
            // A reference is a name of at most 12 bytes ended by `;`.
            var stop = index + 1
            while stop < bytes.count, stop - index <= 12, bytes[stop] != semicolon, bytes[stop] > 0x20,
                  bytes[stop] != ampersand, bytes[stop] != less {
                stop += 1
            }
            guard stop < bytes.count, bytes[stop] == semicolon, stop > index + 1 else {
                out.append(contentsOf: Array("&amp;".utf8))
                index += 1
                continue
            }
            let name = String(decoding: bytes[(index + 1)..<stop], as: UTF8.self)
            if ["amp", "lt", "gt", "quot", "apos"].contains(name) || (name.hasPrefix("#") && HTMLEntities.character(name[...]) != nil) {
                out.append(contentsOf: bytes[index...stop])
            } else if let decoded = HTMLEntities.character(name[...]), let scalar = decoded.unicodeScalars.first {
                out.append(contentsOf: Array("&#\(scalar.value);".utf8))
            } else {
                out.append(contentsOf: Array("&amp;".utf8))
                out.append(contentsOf: bytes[(index + 1)...stop])
            }
            index = stop + 1
        }
        bytes = []
        return String(decoding: out, as: UTF8.self)
    }

    /// The end of a CDATA section or comment starting at `index`, which are copied whole.
    private static func skipped(_ bytes: [UInt8], at index: Int) -> Int? {
        func starts(_ prefix: String) -> Bool {
            let prefix = Array(prefix.utf8)
            return bytes.count - index >= prefix.count && bytes[index..<(index + prefix.count)].elementsEqual(prefix)
        }
        let close: [UInt8]
        if starts("<![CDATA[") { close = Array("]]>".utf8) } else if starts("<!--") { close = Array("-->".utf8) } else { return nil }
        var search = index + 4
        while search + close.count <= bytes.count {
            if bytes[search] == close[0], bytes[search..<(search + close.count)].elementsEqual(close) { return search + close.count }
            search += 1
        }
        return bytes.count
    }

    /// The feed URLs an HTML page advertises (`<link rel="alternate" type="application/rss+xml" href="…">`),
    /// resolved against `base`.
    static func advertisedFeeds(in html: String, base: URL) -> [URL] {
        var feeds: [URL] = []
        var search = html[...]
        while let start = search.range(of: "<link", options: .caseInsensitive),
              let close = search[start.upperBound...].firstIndex(of: ">") {
            let tag = search[start.upperBound..<close]
            let rel = FeedText.attribute("rel", in: tag)?.lowercased() ?? ""
            let type = FeedText.attribute("type", in: tag)?.lowercased() ?? ""
            if rel.split(separator: " ").contains("alternate"),
               ["application/rss+xml", "application/atom+xml", "application/feed+json", "application/json"].contains(type),
               let href = FeedText.attribute("href", in: tag), let url = URL(string: href, relativeTo: base)?.absoluteURL {
                feeds.append(url)
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
