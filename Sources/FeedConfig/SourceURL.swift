import FeedCore
import FeedSupport
import Foundation

/// The checks on a source's `url:` beyond "is it a URL", made at load time because
/// a bad one would otherwise fail (or trap) only at request time. Messages quote the
/// URL redacted: it may carry a password or a key.
enum SourceURL {
    static func check(_ text: String) -> (URL?, problem: String?) {
        var shown: String { Redaction.url(text) }
        guard let url = ConfigMapReader.httpURL(text) else {
            return (nil, "expected an absolute http(s) URL, got \"\(shown)\"")
        }
        if let port = url.port, !(1...65_535).contains(port) {
            return (nil, "port \(port) is out of range (1 to 65535) in \"\(shown)\"")
        }
        if text.unicodeScalars.contains(where: isSpaceOrControl) {
            return (nil, "a URL cannot contain spaces or control characters: \"\(shown)\"")
        }
        return (url, nil)
    }

    /// ASCII is decided by its value; only other scalars ask Unicode's whitespace property,
    /// whose lookup was most of checking 500 sources' URLs.
    private static func isSpaceOrControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII ? scalar.value <= 0x20 || scalar.value == 0x7f : scalar.properties.isWhitespace
    }
}

/// RFC 9110 header names and values: a header that could split a request or smuggle
/// another one is a config error, not a runtime surprise. Values are never quoted.
/// What a configured header must be: a token name, and a value that cannot split a request.
public enum HeaderRules {
    static let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

    /// Why `name: value` cannot be sent, in words that never show the value (it may be a
    /// secret); nil when it can.
    public static func problem(name: String, value: String) -> String? {
        if name.isEmpty || !name.allSatisfy(tokenCharacters.contains) {
            return "\"\(name)\" is not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only)"
        }
        if value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
            return "the value contains a line break or NUL, which would split the request (value not shown)"
        }
        if value.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7f }) {
            return "the value contains a control character (value not shown)"
        }
        return nil
    }
}
