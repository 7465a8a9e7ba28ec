import Foundation

/// Upstream HTML made safe to show: an allow-list of elements and attributes, everything
/// else left out. Kept: paragraphs, headings, lists, emphasis, quotes, code, tables, links
/// and images whose address is `http` or `https`; left out with what they hold: scripts,
/// styles, frames, objects, forms' fields, SVG and MathML; left out but their text kept:
/// every other element. No attribute but a link's `href` and `title`, an image's `src`,
/// `alt`, `width`, `height`, a cell's spans and a list's `start` survives: no event
/// handler, no `style`, no `class`. Text and attribute values are written escaped, every
/// element opened is closed, and nesting stops at ``maxDepth``. One pass over the bytes:
/// no input takes longer than its length.
public enum HTMLSanitizer {
    /// Elements kept, and the attributes each may keep.
    static let allowed: [String: Set<String>] = {
        var table: [String: Set<String>] = [:]
        for name in ["p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "li", "dl", "dt", "dd", "blockquote", "q", "cite",
                     "pre", "code", "kbd", "samp", "var", "em", "strong", "b", "i", "u", "s", "del", "ins", "sub", "sup", "small",
                     "mark", "figure", "figcaption", "table", "thead", "tbody", "tfoot", "tr", "caption", "span", "div"] {
            table[name] = []
        }
        table["a"] = ["href", "title"]
        table["img"] = ["src", "alt", "title", "width", "height"]
        table["td"] = ["colspan", "rowspan"]
        table["th"] = ["colspan", "rowspan", "scope"]
        table["ol"] = ["start"]
        table["abbr"] = ["title"]
        return table
    }()

    /// Elements left out with everything inside them.
    static let dropped: Set<String> = [
        "script", "style", "template", "iframe", "frame", "frameset", "object", "embed", "applet", "noscript", "noembed",
        "textarea", "select", "option", "svg", "math", "title", "head", "xmp", "plaintext", "noframes",
    ]

    static let void: Set<String> = ["br", "hr", "img"]

    /// Open elements at most: deeper ones are left out (their text kept).
    public static let maxDepth = 48

    /// `html` with only what the allow-list keeps; relative addresses resolved against
    /// `base` (the entry's page), else left out.
    public static func clean(_ html: String, base: URL? = nil) -> String {
        let bytes = Array(html.utf8)
        // Written as bytes: text is most of a body, and copied a run at a time.
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 8)
        var open: [String] = []
        // Inside a dropped element: its name, until its end tag.
        var skipping: String?
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "<") else {
                let end = bytes[index...].firstIndex(of: UInt8(ascii: "<")) ?? bytes.count
                if skipping == nil { appendText(bytes[index..<end], to: &out) }
                index = end
                continue
            }
            // A comment, a declaration or a processing instruction: gone (CDATA keeps its text).
            if starts(bytes, at: index, with: "<!--") {
                index = find(bytes, "-->", from: index + 4).map { $0 + 3 } ?? bytes.count
                continue
            }
            if starts(bytes, at: index, with: "<![CDATA[") {
                let end = find(bytes, "]]>", from: index + 9) ?? bytes.count
                if skipping == nil { appendText(bytes[(index + 9)..<end], decoding: false, to: &out) }
                index = min(bytes.count, end + 3)
                continue
            }
            if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "!") || bytes[index + 1] == UInt8(ascii: "?") {
                index = (bytes[index...].firstIndex(of: UInt8(ascii: ">")) ?? bytes.count - 1) + 1
                continue
            }
            guard let tag = Tag(bytes, at: index) else {
                // A `<` that starts no tag is text.
                if skipping == nil { out += "&lt;".utf8 }
                index += 1
                continue
            }
            index = tag.end
            if let name = skipping {
                if tag.closing && tag.name == name { skipping = nil }
                continue
            }
            if dropped.contains(tag.name) {
                if !tag.closing && !tag.selfClosing { skipping = tag.name }
                continue
            }
            guard let attributes = allowed[tag.name] else { continue }
            if tag.closing {
                // Closes it and whatever was left open inside it; a stray end tag is dropped.
                if let position = open.lastIndex(of: tag.name) {
                    for name in open[position...].reversed() { out += "</\(name)>".utf8 }
                    open.removeSubrange(position...)
                }
                continue
            }
            guard open.count < maxDepth else { continue }
            var kept: [(String, String)] = []
            for (name, value) in tag.attributes where attributes.contains(name) {
                guard let value = safeValue(name, value, base: base) else { continue }
                kept.append((name, value))
            }
            // An image without a web address, or a link without one, is no image or link.
            if tag.name == "img" && !kept.contains(where: { $0.0 == "src" }) { continue }
            if tag.name == "a" {
                guard kept.contains(where: { $0.0 == "href" }) else { continue }
                kept.append(("rel", "noopener noreferrer nofollow"))
            }
            out += ("<\(tag.name)" + kept.map { " \($0.0)=\"\(escapeAttribute($0.1))\"" }.joined() + ">").utf8
            if !void.contains(tag.name) { open.append(tag.name) }
        }
        for name in open.reversed() { out += "</\(name)>".utf8 }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` written escaped to `out`, its character references decoded first (as
    /// ``decodeEntities(_:)`` then ``escapeText(_:)``, in one pass over the bytes: runs
    /// without `&`, `<`, `>` or NUL are copied whole).
    static func appendText(_ text: ArraySlice<UInt8>, decoding: Bool = true, to out: inout [UInt8]) {
        var index = text.startIndex
        var run = index
        func escape(_ byte: UInt8) {
            switch byte {
            case UInt8(ascii: "&"): out += "&amp;".utf8
            case UInt8(ascii: "<"): out += "&lt;".utf8
            case UInt8(ascii: ">"): out += "&gt;".utf8
            default: break
            }
        }
        while index < text.endIndex {
            let byte = text[index]
            guard byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte == 0 else {
                index += 1
                continue
            }
            out += text[run..<index]
            index += 1
            run = index
            guard decoding, byte == UInt8(ascii: "&") else {
                escape(byte)
                continue
            }
            let window = text[index..<min(text.endIndex, index + 12)]
            if let semicolon = window.firstIndex(of: UInt8(ascii: ";")),
               let character = HTMLEntities.character(Substring(String(decoding: text[index..<semicolon], as: UTF8.self))),
               let scalar = character.unicodeScalars.first, scalar.value != 0 {
                for byte in String(character).utf8 {
                    if byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") { escape(byte) } else { out.append(byte) }
                }
                index = semicolon + 1
                run = index
            } else {
                escape(byte)
            }
        }
        out += text[run..<index]
    }

    /// Whether `cleanHTML` (what ``clean(_:base:)`` gave) shows the image at `url`: a page
    /// that shows the body does not show its picture twice.
    public static func shows(image url: URL, in cleanHTML: String) -> Bool {
        cleanHTML.contains("src=\"\(escapeAttribute(url.absoluteString))\"")
    }

    /// `html` as text for a terminal: one paragraph per block (headings, paragraphs, quotes,
    /// code, table rows), list items with a bullet, images as `[image: alt]`, and each link's
    /// text followed by `[n]`, its address the n-th of `links` (footnotes).
    public static func readable(_ html: String) -> (paragraphs: [String], links: [String]) {
        let clean = Array(clean(html).utf8)
        var paragraphs: [String] = []
        var links: [String] = []
        var current = ""
        var pendingLink: String?
        var listDepth = 0
        func flush() {
            let text = HTMLText.collapse(current)
            if !text.isEmpty { paragraphs.append(text) }
            current = ""
        }
        let blocks: Set<String> = ["p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "tr", "table", "ul", "ol", "dl", "dt", "dd",
                                   "figure", "figcaption", "caption", "hr"]
        var index = 0
        while index < clean.count {
            guard clean[index] == UInt8(ascii: "<"), let tag = Tag(clean, at: index) else {
                let end = clean[(index + 1)...].firstIndex(of: UInt8(ascii: "<")) ?? clean.count
                current += decodeEntities(String(decoding: clean[index..<end], as: UTF8.self))
                index = end
                continue
            }
            index = tag.end
            switch tag.name {
            case "br": flush()
            case "li":
                if !tag.closing {
                    flush()
                    current = String(repeating: "  ", count: max(0, listDepth - 1)) + "• "
                } else {
                    flush()
                }
            case "ul", "ol":
                flush()
                listDepth += tag.closing ? -1 : 1
            case "td", "th": if !tag.closing { current += current.isEmpty ? "" : " | " }
            case "img":
                let alt = tag.attributes.first { $0.0 == "alt" }?.1 ?? ""
                current += alt.isEmpty ? " [image] " : " [image: \(alt)] "
            case "a":
                if !tag.closing {
                    pendingLink = tag.attributes.first { $0.0 == "href" }?.1
                } else if let link = pendingLink {
                    links.append(link)
                    current += " [\(links.count)]"
                    pendingLink = nil
                }
            default:
                if blocks.contains(tag.name) { flush() }
            }
        }
        flush()
        return (paragraphs, links)
    }

    /// An attribute's value as kept, or nil: addresses must be web addresses, numbers numbers.
    static func safeValue(_ name: String, _ value: String, base: URL?) -> String? {
        switch name {
        case "href", "src":
            // Browsers ignore tabs, line breaks and controls inside a scheme (`java\tscript:`).
            let cleaned = String(String.UnicodeScalarView(value.unicodeScalars.filter { $0.value > 0x20 && $0.value != 0x7F }))
            guard let url = URL(string: cleaned, relativeTo: base)?.absoluteURL, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  url.host?.isEmpty == false else { return nil }
            return url.absoluteString
        case "width", "height", "colspan", "rowspan", "start":
            return value.count <= 6 && !value.isEmpty && value.allSatisfy(\.isASCII) && value.allSatisfy(\.isNumber) ? value : nil
        case "scope":
            return ["row", "col", "rowgroup", "colgroup"].contains(value.lowercased()) ? value.lowercased() : nil
        default:
            return value
        }
    }

    /// One tag: its lower-case name, attributes (names lower-cased, values decoded), and
    /// where it ends.
    struct Tag {
        var name: String
        var closing: Bool
        var selfClosing = false
        var attributes: [(String, String)] = []
        var end: Int

        init?(_ bytes: [UInt8], at start: Int) {
            var index = start + 1
            closing = index < bytes.count && bytes[index] == UInt8(ascii: "/")
            if closing { index += 1 }
            let nameStart = index
            while index < bytes.count, HTMLSanitizer.isNameByte(bytes[index]) { index += 1 }
            // `<` must be followed by a letter to open a tag (`a < b` is text).
            guard index > nameStart, HTMLSanitizer.isLetter(bytes[nameStart]) else { return nil }
            name = String(decoding: bytes[nameStart..<index], as: UTF8.self).lowercased()
            end = bytes.count
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: ">") { end = index + 1; return }
                if byte == UInt8(ascii: "/") {
                    selfClosing = true
                    index += 1
                    continue
                }
                if HTMLSanitizer.isSpace(byte) { index += 1; continue }
                selfClosing = false
                let attributeStart = index
                while index < bytes.count, !HTMLSanitizer.isSpace(bytes[index]), bytes[index] != UInt8(ascii: "="),
                      bytes[index] != UInt8(ascii: ">"), bytes[index] != UInt8(ascii: "/") {
                    index += 1
                }
                let attribute = String(decoding: bytes[attributeStart..<index], as: UTF8.self).lowercased()
                while index < bytes.count, HTMLSanitizer.isSpace(bytes[index]) { index += 1 }
                var value = ""
                if index < bytes.count, bytes[index] == UInt8(ascii: "=") {
                    index += 1
                    while index < bytes.count, HTMLSanitizer.isSpace(bytes[index]) { index += 1 }
                    if index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") {
                        let quote = bytes[index]
                        let valueEnd = bytes[(index + 1)...].firstIndex(of: quote) ?? bytes.count
                        value = String(decoding: bytes[(index + 1)..<valueEnd], as: UTF8.self)
                        index = min(bytes.count, valueEnd + 1)
                    } else {
                        let valueStart = index
                        while index < bytes.count, !HTMLSanitizer.isSpace(bytes[index]), bytes[index] != UInt8(ascii: ">") { index += 1 }
                        value = String(decoding: bytes[valueStart..<index], as: UTF8.self)
                    }
                }
                // The first of a repeated attribute wins, as in browsers.
                if !attribute.isEmpty, !attributes.contains(where: { $0.0 == attribute }) {
                    attributes.append((attribute, HTMLSanitizer.decodeEntities(value)))
                }
            }
        }
    }

    /// Character references decoded (`&amp;`, `&#233;`, `&eacute;`); an unknown one stays.
    static func decodeEntities(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "&")) else { return text }
        var out = ""
        var rest = text[...]
        while let ampersand = rest.firstIndex(of: "&") {
            out += rest[..<ampersand]
            let after = rest.index(after: ampersand)
            if let semicolon = rest[after...].prefix(12).firstIndex(of: ";"), let character = HTMLEntities.character(rest[after..<semicolon]),
               !(character.unicodeScalars.first.map { $0.value == 0 } ?? true) {
                out.append(character)
                rest = rest[rest.index(after: semicolon)...]
            } else {
                out += "&"
                rest = rest[after...]
            }
        }
        return out + rest
    }

    public static func escapeText(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\u{0}": break
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func escapeAttribute(_ text: String) -> String {
        escapeText(text).replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
    }

    static func starts(_ bytes: [UInt8], at index: Int, with text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        // ASCII letters in any case (`<![cdata[` is `<![CDATA[`).
        func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
        return text.withUTF8Buffer { needle in (0..<count).allSatisfy { lower(bytes[index + $0]) == lower(needle[$0]) } }
    }

    static func find(_ bytes: [UInt8], _ text: StaticString, from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        var index = start
        while index < bytes.count {
            if starts(bytes, at: index, with: text) { return index }
            index += 1
        }
        return nil
    }
}
