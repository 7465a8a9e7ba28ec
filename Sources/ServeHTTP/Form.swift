import Foundation
import Hummingbird

/// Forms and queries as browsers send them (`application/x-www-form-urlencoded`).
package enum Form {
    /// `a=1&b=two+words` as pairs, percent-decoded, `+` a space: a form's fields, in a body
    /// or in the query of a GET form (the search box).
    package static func pairs(_ body: String) -> [(String, String)] {
        body.utf8.split(separator: UInt8(ascii: "&")).compactMap { pair in
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts.first.flatMap(decoded) else { return nil }
            return (name, parts.count > 1 ? decoded(parts[1]) ?? "" : "")
        }
    }

    /// A form's name or value: `+` a space, `%XX` a byte; nil for a broken escape or bytes
    /// that are not UTF-8. Read byte by byte: Foundation's `removingPercentEncoding` made
    /// reading a form of 10,000 ids cost more than marking them.
    package static func decoded(_ text: some Collection<UInt8>) -> String? {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var index = text.startIndex
        while index != text.endIndex {
            let byte = text[index]
            index = text.index(after: index)
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index != text.endIndex, let high = hex(text[index]) else { return nil }
                index = text.index(after: index)
                guard index != text.endIndex, let low = hex(text[index]) else { return nil }
                index = text.index(after: index)
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Whether the reader asked for a page (a browser) rather than JSON.
    package static func wantsHTML(_ request: Request) -> Bool {
        guard let accept = request.headers[.accept] else { return false }
        return accept.split(separator: ",").contains { $0.split(separator: ";").first?.trimmingCharacters(in: .whitespaces) == "text/html" }
    }
}

/// Query parameters by name.
package struct FormFields {
    package let pairs: [(String, String)]

    package init(pairs: [(String, String)]) {
        self.pairs = pairs
    }

    package func get(_ name: String) -> String? { pairs.first { $0.0 == name }?.1 }
    package func getAll(_ name: String) -> [String] { pairs.filter { $0.0 == name }.map(\.1) }
}
