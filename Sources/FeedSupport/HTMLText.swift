import Foundation

/// Text for cards from the HTML upstreams carry (feed entries, product descriptions):
/// tags dropped, entities decoded, white space collapsed; and the first image of a piece
/// of content. The one HTML-to-text converter of the project.
public enum HTMLText {
    /// Plain text of `html` on one line: `<p>Caf&eacute; <b>au</b>  lait</p>` → `Café au lait`.
    /// `<script>` and `<style>` bodies are dropped with their tags. Works on the UTF-8
    /// bytes (every summary of every entry passes through here).
    public static func plain(_ html: String) -> String {
        plainText(html, scalarBudget: nil, keepsLines: false).plain
    }

    /// Plain text of `html` that keeps its shape: paragraphs, headings, lists and quotes
    /// apart by a blank line, `<br>` and table rows as line breaks, list items as `• `
    /// lines; white space within a line collapsed as in ``plain(_:)``.
    public static func lines(_ html: String) -> String {
        plainText(html, scalarBudget: nil, keepsLines: true).plain
    }

    /// The plain text of `html` as far as its first `limit + 1` characters, or all of it
    /// when it is shorter: enough to ``cut(_:to:)`` at `limit`, without reading the rest of
    /// a long article (a summary keeps 280 characters of content that may run to 50 KB).
    public static func plain(_ html: String, atLeast limit: Int) -> String {
        // A character is one Unicode scalar or more: should `limit + 2` scalars make
        // fewer than `limit + 1` characters (combining marks), the whole text is read.
        let text = plainText(html, scalarBudget: limit + 2, keepsLines: false)
        return text.complete || isLonger(text.plain, than: limit) ? text.plain : plain(html)
    }

    /// Plain text being written: words joined by one space, none at either end.
    private struct PlainWriter {
        var bytes: [UInt8] = []
        /// Unicode scalars written (bytes that do not continue a UTF-8 sequence).
        var scalars = 0
        /// A space is owed before the next word.
        var pendingSpace = false
        /// Keeping lines: the line breaks owed before the next word (1 a new line, 2 a
        /// blank line between paragraphs), and whether it starts a list item.
        var pendingBreaks = 0
        var pendingBullet = false

        mutating func emit(_ piece: some Collection<UInt8>) {
            if !bytes.isEmpty, pendingBreaks > 0 {
                bytes.append(contentsOf: repeatElement(0x0A, count: pendingBreaks))
                scalars += pendingBreaks
            } else if pendingSpace, !bytes.isEmpty {
                bytes.append(0x20)
                scalars += 1
            }
            if pendingBullet {
                bytes.append(contentsOf: [0xE2, 0x80, 0xA2, 0x20])
                scalars += 2
            }
            pendingSpace = false
            pendingBreaks = 0
            pendingBullet = false
            bytes.append(contentsOf: piece)
            for byte in piece where byte & 0xC0 != 0x80 { scalars += 1 }
        }
    }

    /// The plain text, stopped once more than `scalarBudget` Unicode scalars of it are
    /// written. White space (ASCII, the Unicode spaces of ``spaceWidth(_:at:)``, breaking
    /// tags, entities that decode to space) is collapsed on the way.
    private static func plainText(_ html: String, scalarBudget budget: Int?, keepsLines: Bool) -> (plain: String, complete: Bool) {
        let bytes = Array(html.utf8)
        do {
            var out = PlainWriter()
            out.bytes.reserveCapacity(min(bytes.count, budget.map { $0 * 2 } ?? bytes.count))
            var index = 0
            while index < bytes.count {
                if let budget, out.scalars > budget { return (String(decoding: out.bytes, as: UTF8.self), false) }
                let byte = bytes[index]
                if byte == UInt8(ascii: "<"), let close = bytes[index...].firstIndex(of: UInt8(ascii: ">")) {
                    var nameEnd = index + 1
                    let closing = nameEnd < close && bytes[nameEnd] == UInt8(ascii: "/")
                    if closing { nameEnd += 1 }
                    let nameStart = nameEnd
                    while nameEnd < close, isNameByte(bytes[nameEnd]) { nameEnd += 1 }
                    let name = bytes[nameStart..<nameEnd]
                    index = close + 1
                    if !closing, let dropped = ["script", "style"].first(where: { equalsIgnoringCase(name, $0) }) {
                        let end = Array("</\(dropped)".utf8)
                        var search = index
                        while search + end.count <= bytes.count,
                              !zip(bytes[search..<(search + end.count)], end).allSatisfy({ $0 | 0x20 == $1 | 0x20 }) {
                            search += 1
                        }
                        index = bytes[min(search, bytes.count)...].firstIndex(of: UInt8(ascii: ">")).map { $0 + 1 } ?? bytes.count
                    }
                    // Block elements separate words that the markup alone kept apart; inline
                    // ones (`<b>Bold</b>ly`) do not.
                    if keepsLines, let breaks = Self.lineBreaks.first(where: { equalsIgnoringCase(name, $0.name) })?.breaks {
                        out.pendingBreaks = max(out.pendingBreaks, breaks)
                        if !closing && equalsIgnoringCase(name, "li") { out.pendingBullet = true }
                    } else {
                        out.pendingSpace = out.pendingSpace || Self.breaking.contains { equalsIgnoringCase(name, $0) }
                    }
                } else if byte == UInt8(ascii: "&"),
                          let semicolon = bytes[index..<min(bytes.count, index + 12)].firstIndex(of: UInt8(ascii: ";")),
                          let decoded = HTMLEntities.character(
                            String(decoding: bytes[(index + 1)..<semicolon], as: UTF8.self)[...]) {
                    if decoded.isWhitespace {
                        out.pendingSpace = true
                    } else {
                        out.emit(String(decoded).utf8)
                    }
                    index = semicolon + 1
                } else if case let width = spaceWidth(bytes, at: index), width > 0 {
                    out.pendingSpace = true
                    index += width
                } else {
                    var end = index + 1
                    while end < bytes.count, case let next = bytes[end], next != UInt8(ascii: "<"), next != UInt8(ascii: "&"), next > 0x20,
                          next < 0xC2 || spaceWidth(bytes, at: end) == 0 {
                        end += 1
                    }
                    out.emit(bytes[index..<end])
                    index = end
                }
            }
            return (String(decoding: out.bytes, as: UTF8.self), true)
        }
    }

    /// Whether `text` is longer than `limit` characters, counting no further than that.
    public static func isLonger(_ text: String, than limit: Int) -> Bool {
        // A character is at least one byte.
        guard text.utf8.count > limit else { return false }
        if let prefix = simplePrefix(text, characters: limit) { return prefix.more }
        return !text.dropFirst(limit).isEmpty
    }

    /// Where the first `limit` characters of `text` end (a UTF-8 offset) and whether more
    /// follow, read off the bytes while every scalar is a character of its own: below
    /// U+0300 (Latin, no combining marks) but CR, general punctuation (dashes, quotes,
    /// ellipsis) but the joiners, currency signs. Nil at any other scalar (combining marks,
    /// joiners, emoji and Hangul sequences, CR LF), where only `String` can tell: counting
    /// characters by grapheme was most of the time a summary took.
    private static func simplePrefix(_ text: String, characters limit: Int) -> (end: Int, more: Bool)? {
        let found = text.utf8.withContiguousStorageIfAvailable { bytes -> (end: Int, more: Bool)? in
            var scalars = 0
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                let width: Int
                switch byte {
                case 0x0D: return nil
                case ..<0x80: width = 1
                case 0xC2...0xCB: width = 2
                case 0xE2 where index + 2 < bytes.count:
                    let scalar = 0x2000 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F)
                    guard (0x2000...0x206F).contains(scalar) && scalar != 0x200C && scalar != 0x200D
                            || (0x20A0...0x20CF).contains(scalar) else { return nil }
                    width = 3
                default: return nil
                }
                if scalars == limit { return (index, true) }
                scalars += 1
                index += width
            }
            return (bytes.count, false)
        }
        return found ?? nil
    }

    /// Whether the tag name `name` is `lowercased` (HTML tag names are ASCII, any case).
    private static func equalsIgnoringCase(_ name: ArraySlice<UInt8>, _ lowercased: String) -> Bool {
        name.count == lowercased.utf8.count && zip(name, lowercased.utf8).allSatisfy { $0 | 0x20 == $1 }
    }

    /// Elements that end a word.
    static let breaking: [String] = ["p", "br", "div", "li", "tr", "td", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote"]

    /// Keeping lines: the elements that end a line (1) or a paragraph (2), opening or closing.
    static let lineBreaks: [(name: String, breaks: Int)] = [
        ("br", 1), ("li", 1), ("tr", 1),
        ("p", 2), ("div", 2), ("ul", 2), ("ol", 2), ("blockquote", 2), ("pre", 2), ("table", 2),
        ("h1", 2), ("h2", 2), ("h3", 2), ("h4", 2), ("h5", 2), ("h6", 2),
    ]

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    /// Runs of white space (line breaks, tabs, no-break and other Unicode spaces) as one
    /// space, trimmed. On the UTF-8 bytes: every title and summary passes through here.
    public static func collapse(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        text.utf8.withContiguousStorageIfAvailable { bytes in
            var index = 0
            while index < bytes.count {
                let width = spaceWidth(bytes, at: index)
                if width > 0 {
                    pendingSpace = true
                    index += width
                    continue
                }
                if pendingSpace, !out.isEmpty { out.append(0x20) }
                pendingSpace = false
                out.append(bytes[index])
                index += 1
            }
        } ?? {
            out = Array(text.split(whereSeparator: \.isWhitespace).joined(separator: " ").utf8)
        }()
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` without white space at either end.
    public static func trimmed(_ text: String) -> String {
        let bytes = text.utf8
        guard let first = bytes.first, let last = bytes.last,
              first <= 0x20 || last <= 0x20 || first >= 0xC2 || last >= 0x80 else { return text }
        let array = Array(bytes)
        var start = 0
        while start < array.count, case let width = spaceWidth(array, at: start), width > 0 { start += width }
        var end = array.count
        // Back over trailing spaces: ASCII ones, and the multi-byte ones by their start.
        while end > start {
            if array[end - 1] <= 0x20, spaceWidth(array, at: end - 1) == 1 { end -= 1; continue }
            if end - start >= 2, spaceWidth(array, at: end - 2) == 2 { end -= 2; continue }
            if end - start >= 3, spaceWidth(array, at: end - 3) == 3 { end -= 3; continue }
            break
        }
        return start == 0 && end == array.count ? text : String(decoding: array[start..<end], as: UTF8.self)
    }

    /// The length of the white space character at `index`, or 0: ASCII white space, U+00A0,
    /// U+2000–U+200A, U+202F, U+205F, U+3000.
    @inline(__always)
    public static func spaceWidth(_ bytes: some RandomAccessCollection<UInt8>, at index: Int) -> Int {
        let start = bytes.index(bytes.startIndex, offsetBy: index)
        let byte = bytes[start]
        if byte == 0x20 || (0x09...0x0D).contains(byte) { return 1 }
        guard byte >= 0xC2, bytes.count - index >= 2 else { return 0 }
        let second = bytes[bytes.index(after: start)]
        if byte == 0xC2 { return second == 0xA0 || second == 0x85 ? 2 : 0 }
        guard bytes.count - index >= 3 else { return 0 }
        let third = bytes[bytes.index(start, offsetBy: 2)]
        if byte == 0xE2, second == 0x80, (0x80...0x8A).contains(third) || third == 0xAF || third == 0xA8 || third == 0xA9 { return 3 }
        if byte == 0xE2, second == 0x81, third == 0x9F { return 3 }
        if byte == 0xE3, second == 0x80, third == 0x80 { return 3 }
        return 0
    }

    /// Made once: the getter builds a new set on every call.
    private static let punctuation = CharacterSet.punctuationCharacters

    /// `text` cut at a word boundary to at most `limit` characters, `…` marking the cut.
    public static func cut(_ text: String, to limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var head: Substring
        if let prefix = simplePrefix(text, characters: limit) {
            guard prefix.more else { return text }
            head = text[..<text.utf8.index(text.utf8.startIndex, offsetBy: prefix.end)]
        } else {
            guard text.count > limit else { return text }
            head = text.prefix(limit)
        }
        if let space = head.lastIndex(of: " ") { head = head[..<space] }
        // No dangling comma or dash before the ellipsis.
        while let last = head.unicodeScalars.last, last == " " || punctuation.contains(last) {
            head = head.dropLast()
        }
        // As a String first: `Substring + String` counts the characters of the head.
        return String(head) + "…"
    }

    /// The first `count` words of `text`, `…` when there were more.
    public static func firstWords(_ text: String, _ count: Int) -> String {
        let words = text.split(separator: " ")
        return words.prefix(count).joined(separator: " ") + (words.count > count ? "…" : "")
    }

    /// The `src` of the first `<img>` in `html`, as written.
    public static func firstImage(_ html: String) -> String? {
        let bytes = Array(html.utf8)
        do {
            var index = 0
            while let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")) {
                index = open + 1
                guard bytes.count - open > 4, bytes[open + 1] | 0x20 == UInt8(ascii: "i"), bytes[open + 2] | 0x20 == UInt8(ascii: "m"),
                      bytes[open + 3] | 0x20 == UInt8(ascii: "g"), bytes[open + 4] <= 0x20 || bytes[open + 4] == UInt8(ascii: "/") else { continue }
                guard let close = bytes[open...].firstIndex(of: UInt8(ascii: ">")) else { return nil }
                return attribute("src", in: Substring(String(decoding: bytes[(open + 4)..<close], as: UTF8.self)))
            }
            return nil
        }
    }

    /// The value of `name="…"` (or `'…'`) in a tag's text.
    public static func attribute(_ name: String, in tag: Substring) -> String? {
        var search = tag[...]
        while let found = search.range(of: name, options: .caseInsensitive) {
            let before = found.lowerBound == tag.startIndex ? " " : tag[tag.index(before: found.lowerBound)]
            var rest = tag[found.upperBound...].drop { $0 == " " }
            if before.isWhitespace, rest.first == "=" {
                rest = rest.dropFirst().drop { $0 == " " }
                guard let quote = rest.first else { return nil }
                if quote == "\"" || quote == "'" {
                    let value = rest.dropFirst().prefix { $0 != quote }
                    return plain(String(value))
                }
                return String(rest.prefix { !$0.isWhitespace })
            }
            search = tag[found.upperBound...]
        }
        return nil
    }
}
