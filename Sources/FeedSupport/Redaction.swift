import FeedCore
import Foundation

/// What is secret in what we print and store, decided in one place: every message,
/// log line, listing and cache key that can hold a URL goes through here.
public enum Redaction {
    public static let placeholder = "REDACTED"

    /// Parts of query parameter names that mark a secret (`api_key`, `X-Amz-Signature`,
    /// `access_token`, `sig`, `session`, …). Matching by part errs on the side of hiding.
    static let secretNameParts = [
        "key", "token", "secret", "sig", "pass", "pwd", "auth", "session", "credential", "jwt", "bearer", "cookie",
    ]

    /// Whether a query parameter of this name carries a secret.
    public static func isSecretParameter(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return secretNameParts.contains { lowered.contains($0) }
    }

    /// Where `user:password` stands in `text`: right after the first `://` that is followed
    /// by text holding a `:` and then an `@`, with no `/`, `@` or white space (Unicode's
    /// `White_Space`, as a regular expression's `\s`) before that `@`. By hand, not a
    /// regular expression: that started ICU in every run that loads Sources.yml.
    package static func userInfoRange(in text: String) -> Range<String.Index>? {
        // On the UTF-8 bytes: every cache key and every URL in a message passes through
        // here, and a run of 500 feeds spent more on the scalar search than on its config.
        let utf8 = text.utf8
        var index = utf8.startIndex
        while index < utf8.endIndex {
            guard utf8[index] == UInt8(ascii: ":"), utf8[index...].starts(with: "://".utf8) else {
                index = utf8.index(after: index)
                continue
            }
            let start = utf8.index(index, offsetBy: 3)
            var sawColon = false
            var scan = start
            while scan < utf8.endIndex {
                let byte = utf8[scan]
                if byte == UInt8(ascii: "@") {
                    if sawColon { return start..<scan }
                    break
                }
                if byte == UInt8(ascii: "/") { break }
                if byte < 0x80 ? (byte == 0x20 || (0x09...0x0D).contains(byte)) : text.unicodeScalars[scan].properties.isWhitespace { break }
                if byte == UInt8(ascii: ":") { sawColon = true }
                scan = utf8.index(after: scan)
            }
            index = utf8.index(after: index)
        }
        return nil
    }

    /// A URL as text, fit to print: the user-info password and the values of secret
    /// parameters replaced by `REDACTED`, control characters percent-encoded (a CR/LF
    /// written into Sources.yml must not split the error line that quotes it). Works on
    /// text that is not a valid URL too (config errors quote what was written).
    public static func url(_ text: String) -> String {
        var result = text.unicodeScalars.contains(where: isControl) ? escapingControls(text) : text
        // scheme://user:password@host → scheme://user:REDACTED@host
        if let userInfo = userInfoRange(in: result) {
            let user = result[userInfo].split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
            result.replaceSubrange(userInfo, with: "\(user):\(placeholder)")
        }
        guard let queryStart = result.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return result }
        let head = result[..<queryStart]
        var tail = ""
        var name = ""
        var inValue = false
        var redacting = false
        for character in result[queryStart...] {
            switch character {
            case "?", "&", "#", ";":
                if redacting { tail += placeholder }
                tail.append(character)
                name = ""
                inValue = false
                redacting = false
            case "=" where !inValue:
                tail.append(character)
                inValue = true
                redacting = isSecretParameter(name.removingPercentEncoding ?? name)
            default:
                if inValue {
                    if !redacting { tail.append(character) }
                } else {
                    name.append(character)
                    tail.append(character)
                }
            }
        }
        if redacting { tail += placeholder }
        return head + tail
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value)
    }

    private static func escapingControls(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                for byte in String(scalar).utf8 { escaped += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2) }
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}

extension URL {
    /// The URL for people and logs; see ``Redaction/url(_:)``.
    public var redactedString: String {
        Redaction.url(absoluteString)
    }
}
