import FeedCore

/// What an untagged plain YAML scalar is, by the YAML 1.1 rules of Yams' default resolver
/// (bool, int, float, null; everything else text), read without its regular expressions:
/// compiling them started ICU, a twentieth of a warm run that reads a cached page.
/// `YAMLPlainScalarTests` holds it against `Resolver.default` over a corpus.
enum YAMLPlainScalar {
    static func kind(_ text: String) -> ConfigScalar.Kind {
        // Most scalars are words and URLs: one that cannot start a boolean, a number or a
        // null is text without hashing it or copying its bytes.
        guard let first = text.utf8.first, isDigit(first) || otherFirstBytes.utf8.contains(first) else { return text.isEmpty ? .null : .text }
        if booleans.contains(text) { return .boolean }
        let bytes = Array(text.utf8)
        if isInteger(bytes[...]) { return .integer }
        if isFloat(bytes[...]) { return .float }
        if nulls.contains(text) { return .null }
        return .text
    }

    private static let booleans: Set<String> = [
        "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF",
    ]
    private static let nulls: Set<String> = ["~", "null", "Null", "NULL", ""]
    /// With the digits, the first bytes of every boolean, number and null above.
    private static let otherFirstBytes = "yYnNtTfFoO+-.~"

    /// `[-+]?0b[0-1_]+ | [-+]?0o?[0-7_]+ | [-+]?(0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+ | [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+`
    static func isInteger(_ text: ArraySlice<UInt8>) -> Bool {
        let rest = unsigned(text)
        guard let first = rest.first else { return false }
        let tail = rest.dropFirst()
        if first == UInt8(ascii: "0") {
            if tail.isEmpty { return true }
            if tail.first == UInt8(ascii: "b") { return oneOrMore(tail.dropFirst(), binary) }
            if tail.first == UInt8(ascii: "x") { return oneOrMore(tail.dropFirst(), hex) }
            if tail.first == UInt8(ascii: "o") { return oneOrMore(tail.dropFirst(), octal) }
            return oneOrMore(tail, octal)
        }
        guard isDigit(first) else { return false }
        let afterDigits = tail.drop(while: digitOrUnderscore)
        return afterDigits.isEmpty || sexagesimal(afterDigits)?.isEmpty == true
    }

    /// `[-+]?[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)? | \.[0-9_]+([eE][-+][0-9]+)?
    /// | [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]* | [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)`
    static func isFloat(_ text: ArraySlice<UInt8>) -> Bool {
        let rest = unsigned(text)
        let signed = rest.count != text.count
        if let first = rest.first, isDigit(first) {
            var after = rest.dropFirst().drop(while: digitOrUnderscore)
            if let groups = sexagesimal(after), groups.first == UInt8(ascii: ".") {
                return groups.dropFirst().allSatisfy(digitOrUnderscore)
            }
            if after.first == UInt8(ascii: ".") { after = after.dropFirst().drop(while: digitOrUnderscore) }
            return after.isEmpty || exponent(after, signRequired: false)
        }
        guard rest.first == UInt8(ascii: ".") else { return false }
        let word = String(decoding: rest.dropFirst(), as: UTF8.self)
        if ["inf", "Inf", "INF"].contains(word) { return true }
        if signed { return false }
        if ["nan", "NaN", "NAN"].contains(word) { return true }
        let digits = rest.dropFirst().prefix(while: digitOrUnderscore)
        guard !digits.isEmpty else { return false }
        let after = rest.dropFirst(1 + digits.count)
        return after.isEmpty || exponent(after, signRequired: true)
    }

    /// `[eE][-+]?[0-9]+` to the end (the sign required when asked).
    private static func exponent(_ text: ArraySlice<UInt8>, signRequired: Bool) -> Bool {
        guard text.first == UInt8(ascii: "e") || text.first == UInt8(ascii: "E") else { return false }
        var digits = text.dropFirst()
        if digits.first == UInt8(ascii: "+") || digits.first == UInt8(ascii: "-") {
            digits = digits.dropFirst()
        } else if signRequired {
            return false
        }
        return oneOrMore(digits, isDigit)
    }

    /// One or more `:[0-5]?[0-9]` groups; what follows them, or nil when there is none.
    private static func sexagesimal(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        var rest = text
        var groups = 0
        while rest.first == UInt8(ascii: ":") {
            let digits = rest.dropFirst().prefix(2)
            if digits.count == 2, digits.allSatisfy(isDigit), let tens = digits.first, tens <= UInt8(ascii: "5") {
                rest = rest.dropFirst(3)
            } else if let unit = digits.first, isDigit(unit) {
                rest = rest.dropFirst(2)
            } else {
                return nil
            }
            groups += 1
        }
        return groups > 0 ? rest : nil
    }

    private static func unsigned(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        text.first == UInt8(ascii: "+") || text.first == UInt8(ascii: "-") ? text.dropFirst() : text
    }

    private static func oneOrMore(_ text: ArraySlice<UInt8>, _ allowed: (UInt8) -> Bool) -> Bool {
        !text.isEmpty && text.allSatisfy(allowed)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
    private static func digitOrUnderscore(_ byte: UInt8) -> Bool { isDigit(byte) || byte == UInt8(ascii: "_") }
    private static func binary(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "0") || byte == UInt8(ascii: "1") || byte == UInt8(ascii: "_") }
    private static func octal(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 8 || byte == UInt8(ascii: "_") }
    private static func hex(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20) &- UInt8(ascii: "a") < 6 || byte == UInt8(ascii: "_")
    }
}
