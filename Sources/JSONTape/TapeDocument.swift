import Foundation

/// Decodes `Decodable` wire models from a ``JSONTape`` with Foundation's semantics: the
/// same values and the same `DecodingError` cases, types and coding paths (which is what
/// ``LenientList`` turns into skip messages). Whatever it is not sure to read exactly as
/// Foundation would (numbers that do not fit, `Date`, lone surrogates …) marks the
/// document ``TapeDocument/irregular``, and the body is decoded again by Foundation.
///
/// Why not Foundation alone: on a 20 MB product grid its `JSONDecoder` was most of a cold
/// run, chiefly because it makes a `String` and a dictionary entry of every key of every
/// object, read or not (docs/performance.md).
public enum TapeDecoding {
    /// What the tape made of a body.
    public enum Outcome<T> {
        case decoded(T)
        /// A `DecodingError` escaped the wire model: Foundation words it.
        case failed
        /// Not for the tape to decide.
        case irregular
    }

    /// Decodes `type` from `body` if the tape is sure to read it as Foundation would.
    public static func decode<T: Decodable>(_ type: T.Type, from body: Data) -> Outcome<T> {
        body.withUnsafeBytes { raw in
            guard let tape = JSONTape(scanning: raw) else { return .irregular }
            let document = TapeDocument(bytes: raw, tape: tape)
            do {
                let value = try document.decode(T.self, at: 0, parent: nil, key: nil)
                return document.irregular ? .irregular : .decoded(value)
            } catch {
                return document.irregular ? .irregular : .failed
            }
        }
    }
}

extension TapeDecoding {
    /// A ``TapeTree`` of `body`, keeping at most `limit` elements of the array found by
    /// following the object keys of `path` (the rest is skipped on the tape, never built):
    /// a body of half a million records costs what `limit` of them cost. Nil when the
    /// tape cannot read `body` (Foundation then decodes it whole).
    public static func tree<Tree: TapeTree>(_ type: Tree.Type, from body: Data, keepingAtMost limit: Int,
                                            ofArrayAt path: [String]) -> Tree? {
        body.withUnsafeBytes { raw in
            guard let tape = JSONTape(scanning: raw) else { return nil }
            let document = TapeDocument(bytes: raw, tape: tape)
            let tree = try? document.tree(type, at: 0, limit: (path[...], limit))
            return document.irregular ? nil : tree
        }
    }
}

/// A JSON value type (any value at all) that the tape builds node by node, instead of
/// through its `init(from:)`.
public protocol TapeTree: Decodable {
    /// The value of one node, its children already built.
    init(node: TapeNode<Self>)
}

/// One JSON node with its children.
public enum TapeNode<Tree> {
    case null
    case bool(Bool)
    case number(Decimal)
    case string(String)
    case array([Tree])
    case object([String: Tree])
}

/// Thrown where the tape leaves the decision to Foundation; the document is marked too,
/// since a wire model may swallow the error with `try?`.
struct TapeIrregular: Error {}

/// The bytes and tape of one decode. Lives only inside `Data.withUnsafeBytes`.
final class TapeDocument {
    let bytes: UnsafeRawBufferPointer
    let tape: JSONTape
    private(set) var irregular = false

    init(bytes: UnsafeRawBufferPointer, tape: JSONTape) {
        self.bytes = bytes
        self.tape = tape
    }

    func leaveToFoundation() -> TapeIrregular {
        irregular = true
        return TapeIrregular()
    }

    @inline(__always)
    func entry(_ index: Int) -> JSONTape.Entry {
        tape.entries[index]
    }

    /// The bytes of a string's content or of a number's text.
    @inline(__always)
    func text(of entry: JSONTape.Entry) -> UnsafeRawBufferPointer {
        let start = Int(entry.start)
        return UnsafeRawBufferPointer(rebasing: bytes[start..<start + JSONTape.length(of: entry, in: bytes)])
    }

    /// Whether the member key at `entry` is `wanted`, where `wanted` has no quote or
    /// backslash and the key is a plain string: then the key is `wanted` exactly when its
    /// text starts with `wanted` and its closing quote follows.
    @inline(__always)
    func plainKey(_ entry: JSONTape.Entry, equals wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = Int(entry.start)
        guard start + wanted.count < bytes.count, let base = bytes.baseAddress, let first = wanted.baseAddress else { return false }
        let text = base + start
        // Keys rarely share a first byte: skip the call for those.
        return text.load(as: UInt8.self) == first.pointee && memcmp(text, first, wanted.count) == 0
            && text.load(fromByteOffset: wanted.count, as: UInt8.self) == UInt8(ascii: "\"")
    }

    // MARK: Values by type

    /// Decodes the value at `index`; `parent` and `key` say where it is, for errors and
    /// for the decoder a wire model's own `init(from:)` gets.
    func decode<T: Decodable>(_ type: T.Type, at index: Int, parent: TapeDecoder?, key: (any CodingKey)?) throws -> T {
        func path() -> [any CodingKey] { TapeDecoder.path(parent, key) }
        if T.self == String.self { return try string(at: index, path) as! T }
        if T.self == Int.self { return try integer(Int.self, at: index, path) as! T }
        if T.self == Bool.self { return try bool(at: index, path) as! T }
        if T.self == Double.self { return try double(at: index, path) as! T }
        if T.self == Decimal.self { return try decimal(at: index, path) as! T }
        if T.self == URL.self { return try url(at: index, path) as! T }
        if let tree = T.self as? any TapeTree.Type, let value = try? self.tree(tree, at: index) { return value as! T }
        if T.self == Date.self || T.self == Data.self || T.self == Float.self { throw leaveToFoundation() }
        return try T(from: TapeDecoder(document: self, index: index, parent: parent, key: key))
    }

    func string(at index: Int, _ path: () -> [any CodingKey]) throws -> String {
        let entry = entry(index)
        switch entry.kind {
        case .string: return String(decoding: text(of: entry), as: UTF8.self)
        case .escapedString: return try unescaped(entry)
        default: throw mismatch(String.self, entry, path)
        }
    }

    func bool(at index: Int, _ path: () -> [any CodingKey]) throws -> Bool {
        let entry = entry(index)
        switch entry.kind {
        case .true: return true
        case .false: return false
        default: throw mismatch(Bool.self, entry, path)
        }
    }

    /// Plain integer text only; `1.0`, `1e2` and values out of range are Foundation's.
    func integer<T: FixedWidthInteger>(_ type: T.Type, at index: Int, _ path: () -> [any CodingKey]) throws -> T {
        let entry = entry(index)
        guard entry.kind == .number else { throw mismatch(T.self, entry, path) }
        let digits = text(of: entry)
        var value: T = 0
        var negative = false
        for (offset, byte) in digits.enumerated() {
            if offset == 0 && byte == UInt8(ascii: "-") {
                negative = true
                continue
            }
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { throw leaveToFoundation() }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative
                ? times10.subtractingReportingOverflow(T(digit)) : times10.addingReportingOverflow(T(digit))
            guard !overflow1 && !overflow2 else { throw leaveToFoundation() }
            value = next
        }
        return value
    }

    func double(at index: Int, _ path: () -> [any CodingKey]) throws -> Double {
        let entry = entry(index)
        guard entry.kind == .number else { throw mismatch(Double.self, entry, path) }
        guard let value = Double(String(decoding: text(of: entry), as: UTF8.self)), value.isFinite else {
            throw leaveToFoundation()
        }
        return value
    }

    /// Up to 30 characters of number text: exactly what Foundation reads; longer
    /// mantissas and large exponents are Foundation's to round.
    func decimal(at index: Int, _ path: () -> [any CodingKey]) throws -> Decimal {
        let entry = entry(index)
        guard entry.kind == .number else { throw mismatch(Decimal.self, entry, path) }
        let text = text(of: entry)
        guard text.count <= 30, !text.contains(where: { $0 | 0x20 == UInt8(ascii: "e") }),
              let value = Decimal(string: String(decoding: text, as: UTF8.self)) else { throw leaveToFoundation() }
        return value
    }

    /// Text that is already a valid URL as written (nothing for `URL(string:)` to encode).
    func url(at index: Int, _ path: () -> [any CodingKey]) throws -> URL {
        let text = try string(at: index, path)
        guard text.utf8.allSatisfy(Self.isURLCharacter), let url = URL(string: text) else { throw leaveToFoundation() }
        return url
    }

    private static func isURLCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            // RFC 3986 unreserved, reserved and `%`.
            "-._~:/?#[]@!$&'()*+,;=%".utf8.contains(byte)
        }
    }

    /// Any value as a ``TapeTree``, built straight from the tape: a tree's `init(from:)`
    /// tries five types in turn on every value, which is slow for a whole body.
    /// `limit`, when given, caps the array at the end of its key path (``TapeDecoding/tree(_:from:keepingAtMost:ofArrayAt:)``).
    func tree<Tree: TapeTree>(_ type: Tree.Type, at index: Int, limit: (path: ArraySlice<String>, count: Int)? = nil) throws -> Tree {
        let entry = entry(index)
        let noPath: () -> [any CodingKey] = { [] }
        switch entry.kind {
        case .null: return Tree(node: .null)
        case .true: return Tree(node: .bool(true))
        case .false: return Tree(node: .bool(false))
        case .number: return Tree(node: .number(try decimal(at: index, noPath)))
        case .string, .escapedString: return Tree(node: .string(try string(at: index, noPath)))
        case .array:
            let cap = limit.flatMap { $0.path.isEmpty ? $0.count : nil } ?? .max
            var items: [Tree] = []
            var child = index + 1
            while child < Int(entry.start), items.count < cap {
                items.append(try tree(type, at: child))
                child = tape.next(after: child)
            }
            return Tree(node: .array(items))
        case .object:
            var members: [String: Tree] = [:]
            var child = index + 1
            while child < Int(entry.start) {
                let name = try string(at: child, noPath)
                // The first of duplicate keys wins, as with Foundation.
                if members[name] == nil {
                    let below = limit.flatMap { $0.path.first == name ? ($0.path.dropFirst(), $0.count) : nil }
                    members[name] = try tree(type, at: child + 1, limit: below)
                }
                child = tape.next(after: child + 1)
            }
            return Tree(node: .object(members))
        }
    }

    // MARK: Helpers

    /// Foundation's error for a value of the wrong type (or null) where `type` was asked.
    func mismatch(_ type: Any.Type, _ entry: JSONTape.Entry, _ path: () -> [any CodingKey]) -> DecodingError {
        if entry.kind == .null {
            return .valueNotFound(type, .init(codingPath: path(), debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        }
        return .typeMismatch(type, .init(codingPath: path(), debugDescription: "Expected to decode \(type) but found \(Self.describe(entry.kind)) instead."))
    }

    static func describe(_ kind: JSONTape.Kind) -> String {
        switch kind {
        case .null: "null"
        case .true, .false: "bool"
        case .number: "number"
        case .string, .escapedString: "a string"
        case .array: "an array"
        case .object: "a dictionary"
        }
    }

    /// A string with backslash escapes, decoded. Lone surrogates are Foundation's to reject.
    private func unescaped(_ entry: JSONTape.Entry) throws -> String {
        let raw = text(of: entry)
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                index += 1
                continue
            }
            let code = raw[index + 1]
            index += 2
            switch code {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(raw, at: index)
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard raw.count - index >= 6, raw[index] == UInt8(ascii: "\\"), raw[index + 1] == UInt8(ascii: "u") else {
                        throw leaveToFoundation()
                    }
                    let low = hex4(raw, at: index + 2)
                    guard (0xDC00...0xDFFF).contains(low) else { throw leaveToFoundation() }
                    scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                    index += 6
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw leaveToFoundation() }
                UTF8.encode(unicode) { out.append($0) }
            default: out.append(code)  // " \ /
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Four hex digits the scanner has checked.
    private func hex4(_ raw: UnsafeRawBufferPointer, at index: Int) -> UInt32 {
        var value: UInt32 = 0
        for offset in 0..<4 { value = value << 4 | (JSONEscapes.hexValue(raw[index + offset]) ?? 0) }
        return value
    }
}
