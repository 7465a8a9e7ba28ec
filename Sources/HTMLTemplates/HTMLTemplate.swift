import Mustache

/// Every HTML page and digest we write is a swift-mustache template parsed here, so that
/// each `{{value}}` is escaped by ``HTMLEscaping``: by its UTF-8 bytes. swift-mustache's
/// own HTML escaping looks each `Character` up in a dictionary, and a `Character` is a
/// grapheme cluster: a `"` followed by a combining mark (U+0301) is one `Character` that
/// is not `"`, so it went out unescaped and ended the attribute it stood in — an upstream's
/// title could add attributes to our pages. Walking graphemes was also a quarter of a
/// reader page's rendering.
public enum HTMLTemplate {
    /// The name ``HTMLEscaping`` is registered under, for the `CONTENT_TYPE` pragma.
    static let contentTypeName = "AGGREGATE_HTML"

    /// Registered once, before the first template naming it is parsed: swift-mustache
    /// looks content types up by name while it parses, in its own registry.
    private static let registered: Void = {
        MustacheContentTypes.register(HTMLEscaping(), named: contentTypeName)
    }()

    /// `text` parsed as a template whose values (and its partials') are escaped by
    /// ``HTMLEscaping``. The pragma that says so is a line of its own before `text` (a
    /// standalone tag: it leaves no trace in the output, and a tag that begins `text`
    /// stays standalone), so a line of `text` is ``lineShift`` further on in parse errors.
    public static func parse(_ text: String) throws -> MustacheTemplate {
        _ = registered
        return try MustacheTemplate(string: pragma + "\n" + text)
    }

    static let pragma = "{{% CONTENT_TYPE: \(contentTypeName)}}"

    /// How many lines the pragma moves `text`'s lines on.
    public static let lineShift = 1
}

/// HTML escaping of a template's values, byte by byte: `<`, `>`, `&`, `"` and `'` become
/// `&lt;`, `&gt;`, `&amp;`, `&quot;` and `&#39;` wherever they are, whatever follows them.
public struct HTMLEscaping: MustacheContentType {
    public init() {}

    public func escapeText(_ text: String) -> String {
        let bytes = text.utf8
        // Most values (ids, numbers, most titles) have nothing to escape: kept as they are.
        guard bytes.contains(where: Self.isSpecial) else { return text }
        var escaped: [UInt8] = []
        escaped.reserveCapacity(bytes.count + 16)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "<"): escaped += "&lt;".utf8
            case UInt8(ascii: ">"): escaped += "&gt;".utf8
            case UInt8(ascii: "&"): escaped += "&amp;".utf8
            case UInt8(ascii: "\""): escaped += "&quot;".utf8
            case UInt8(ascii: "'"): escaped += "&#39;".utf8
            default: escaped.append(byte)
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    private static func isSpecial(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "\"")
            || byte == UInt8(ascii: "'")
    }
}
