import Foundation

/// A JSON document read once, front to back, into a flat list of its values (the
/// "tape"), which ``TapeDecoder`` then walks without reading the text again.
///
/// Each value is one 4-byte entry, in document order; an object's members are a key
/// entry followed by the value's entries. Strings and numbers keep their place in the
/// text and are turned into Swift values only when a wire model asks for them, so the
/// fields a mapping never reads cost one pass of the scanner and nothing else. An entry
/// holds no length: the few values a mapping reads are measured again when read, which
/// costs less than carrying a length for every value (the tape of a 40 MB grid was 21 MB
/// with one; docs/performance.md).
///
/// The scanner is strict (RFC 8259) and stops at anything it does not handle itself:
/// syntax errors, bytes that are not UTF-8, nesting deeper than Foundation allows, bodies
/// of 512 MiB and more. ``JSONBody`` then gives the body to Foundation's `JSONDecoder`,
/// whose verdict and error messages stand.
struct JSONTape {
    enum Kind: UInt32 {
        case null, `false`, `true`, number, string, escapedString, array, object
    }

    /// The kind in the top 3 bits; below, `start`: a byte offset (strings: after the
    /// opening quote; numbers and literals: their first byte) or, for arrays and objects,
    /// the index of the first entry after the container.
    struct Entry {
        private var bits: UInt32

        static let startMask: UInt32 = (1 << 29) - 1

        init(_ kind: Kind, start: UInt32) {
            bits = kind.rawValue << 29 | start
        }

        // Three bits always name a case: the unwrap cannot fail.
        var kind: Kind { Kind(rawValue: bits >> 29).unsafelyUnwrapped }
        var start: UInt32 { bits & Self.startMask }
        /// An array or an object (kinds 6 and 7: both top bits set).
        var isContainer: Bool { bits >> 30 == 0b11 }
        var isPlainString: Bool { bits >> 29 == Kind.string.rawValue }
    }

    /// Foundation's limit: deeper documents are its to reject.
    static let maximumDepth = 512

    let entries: [Entry]

    /// The index of the entry after the value at `index` (and everything inside it).
    @inline(__always)
    func next(after index: Int) -> Int {
        let entry = entries[index]
        return entry.isContainer ? Int(entry.start) : index + 1
    }

    /// How many elements (or members) the container at `index` has.
    func count(of index: Int) -> Int {
        let end = Int(entries[index].start)
        let perElement = entries[index].kind == .object ? 2 : 1
        var count = 0
        var child = index + 1
        while child < end {
            // A member is its key, then its value.
            child = next(after: child + perElement - 1)
            count += 1
        }
        return count
    }

    /// Scans `bytes`; `nil` when the document is not one the tape handles (see above).
    init?(scanning bytes: UnsafeRawBufferPointer) {
        // Every offset fits in an entry; so does every index, as values are never empty.
        guard bytes.count <= Int(Entry.startMask), let base = bytes.baseAddress else { return nil }
        var scanner = Scanner(bytes: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        guard let entries = scanner.scan() else { return nil }
        self.entries = entries
    }

    /// The byte length of the string (its content) or number that `entry` starts, in a
    /// document the tape has scanned.
    static func length(of entry: Entry, in bytes: UnsafeRawBufferPointer) -> Int {
        let start = Int(entry.start)
        switch entry.kind {
        case .string:
            // No backslash: the first quote closes it.
            guard let base = bytes.baseAddress, let quote = memchr(base + start, Int32(UInt8(ascii: "\"")), bytes.count - start) else {
                return bytes.count - start
            }
            return UnsafeRawPointer(quote) - (base + start)
        case .escapedString:
            var position = start
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\\"): position += 2
                case UInt8(ascii: "\""): return position - start
                default: position += 1
                }
            }
            return position - start
        case .number:
            var position = start
            while position < bytes.count, isNumberByte(bytes[position]) { position += 1 }
            return position - start
        case .null, .true, .false, .array, .object:
            return 0
        }
    }

    @inline(__always)
    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
             UInt8(ascii: "e"), UInt8(ascii: "E"):
            true
        default:
            false
        }
    }
}

/// The scanning pass itself: one loop over the bytes with an explicit stack, so hostile
/// nesting cannot overflow the call stack.
private struct Scanner {
    let bytes: UnsafePointer<UInt8>
    let count: Int
    var position = 0
    var entries: [JSONTape.Entry] = []

    init(bytes: UnsafePointer<UInt8>, count: Int) {
        self.bytes = bytes
        self.count = count
        entries.reserveCapacity(count / 12)
    }

    mutating func scan() -> [JSONTape.Entry]? {
        // The tape indices of the open containers.
        var open: [Int] = []
        skipWhitespace()
        // A UTF-16/32 body or a byte-order mark is Foundation's to read.
        guard position < count, bytes[position] < 0x80 else { return nil }
        var needValue = true
        while true {
            if needValue {
                guard position < count else { return nil }
                let byte = bytes[position]
                if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                    guard open.count < JSONTape.maximumDepth else { return nil }
                    let isObject = byte == UInt8(ascii: "{")
                    open.append(entries.count)
                    entries.append(JSONTape.Entry(isObject ? .object : .array, start: 0))
                    position += 1
                    skipWhitespace()
                    guard position < count else { return nil }
                    if bytes[position] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        position += 1
                        close(open.removeLast())
                    } else {
                        if isObject { guard memberKey() else { return nil } }
                        continue
                    }
                } else {
                    guard scalar() else { return nil }
                }
            }
            // After a value: the document ends, or its container goes on or closes.
            skipWhitespace()
            guard !open.isEmpty else {
                return position == count ? entries : nil
            }
            guard position < count, let container = open.last else { return nil }
            let isObject = entries[container].kind == .object
            switch bytes[position] {
            case UInt8(ascii: ","):
                position += 1
                skipWhitespace()
                if isObject { guard memberKey() else { return nil } }
                needValue = true
            case UInt8(ascii: "}") where isObject, UInt8(ascii: "]") where !isObject:
                position += 1
                close(open.removeLast())
                needValue = false
            default:
                return nil
            }
        }
    }

    private mutating func close(_ container: Int) {
        entries[container] = JSONTape.Entry(entries[container].kind, start: UInt32(entries.count))
    }

    /// `"key"` then `:`, leaving the position at the value.
    private mutating func memberKey() -> Bool {
        guard position < count, bytes[position] == UInt8(ascii: "\""), string() else { return false }
        skipWhitespace()
        guard position < count, bytes[position] == UInt8(ascii: ":") else { return false }
        position += 1
        skipWhitespace()
        return true
    }

    private mutating func scalar() -> Bool {
        switch bytes[position] {
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true", .true)
        case UInt8(ascii: "f"): return literal("false", .false)
        case UInt8(ascii: "n"): return literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return false
        }
    }

    private mutating func literal(_ text: StaticString, _ kind: JSONTape.Kind) -> Bool {
        let length = text.utf8CodeUnitCount
        guard count - position >= length else { return false }
        for offset in 0..<length where bytes[position + offset] != text.utf8Start[offset] { return false }
        entries.append(JSONTape.Entry(kind, start: UInt32(position)))
        position += length
        return true
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    private mutating func number() -> Bool {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < count else { return false }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            guard digits() else { return false }
        }
        if position < count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() else { return false }
        }
        if position < count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard digits() else { return false }
        }
        entries.append(JSONTape.Entry(.number, start: UInt32(start)))
        return true
    }

    /// One or more digits.
    private mutating func digits() -> Bool {
        let start = position
        while position < count, bytes[position] &- UInt8(ascii: "0") < 10 { position += 1 }
        return position > start
    }

    /// A string from its opening quote: checks escapes, control characters and UTF-8.
    private mutating func string() -> Bool {
        position += 1
        let start = position
        var escaped = false
        var ascii = true
        while true {
            // Eight bytes at a time while none is a quote, a backslash or a control
            // character (nor, until one was seen, non-ASCII): most of a body is plain text.
            // (SIMD16 comparisons were a hundred times slower: their reductions are not
            // vectorised.)
            let stopMask = ascii ? Self.highs : 0
            while count - position >= 8 {
                let word = UnsafeRawPointer(bytes + position).loadUnaligned(as: UInt64.self)
                if Self.stops(word) | (word & stopMask) != 0 { break }
                position += 8
            }
            guard position < count else { return false }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                guard escape() else { return false }
                continue
            }
            if byte < 0x20 { return false }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        let length = position - start
        position += 1
        if !ascii && !UTF8Check.isValid(UnsafeBufferPointer(start: bytes + start, count: length)) { return false }
        entries.append(JSONTape.Entry(escaped ? .escapedString : .string, start: UInt32(start)))
        return true
    }

    /// `\"` `\\` `\/` `\b` `\f` `\n` `\r` `\t` or `\uXXXX`, from the backslash.
    private mutating func escape() -> Bool {
        guard count - position >= 2 else { return false }
        switch bytes[position + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
             UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            position += 2
            return true
        case UInt8(ascii: "u"):
            guard count - position >= 6 else { return false }
            for offset in 2..<6 where JSONEscapes.hexValue(bytes[position + offset]) == nil { return false }
            position += 6
            return true
        default:
            return false
        }
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Non-zero when a byte of `word` is `"`, `\` or below 0x20 (exact for ASCII bytes; a
    /// non-ASCII byte may also flag the word, which is then read byte by byte).
    @inline(__always)
    private static func stops(_ word: UInt64) -> UInt64 {
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        return ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash | (word &- ones &* 0x20) & ~word) & highs
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while position < count {
            switch bytes[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): position += 1
            default: return
            }
        }
    }
}

/// `\u` escapes and hex digits.
enum JSONEscapes {
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}

/// Well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
enum UTF8Check {
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 { index += 1; continue }
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upper = 0x9F
            case 0xF0: length = 4; lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upper = 0x8F
            default: return false
            }
            guard count - index >= length else { return false }
            let second = bytes[index + 1]
            guard second >= lower && second <= upper else { return false }
            for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return false }
            index += length
        }
        return true
    }
}
