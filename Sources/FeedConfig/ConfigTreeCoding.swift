import FeedCore
import Foundation

/// The binary form of a ``ConfigNode`` tree: each node its kind, line and column, then a
/// scalar's kind and text, a list's items or a mapping's entries (key, key place, value).
/// Numbers are LEB128; a file that is cut short or damaged decodes to nil.
enum ConfigTreeCoding {
    static func encode(_ node: ConfigNode, into data: inout Data) {
        var bytes: [UInt8] = []
        write(node, to: &bytes)
        data.append(contentsOf: bytes)
    }

    private static func write(_ node: ConfigNode, to bytes: inout [UInt8]) {
        switch node.value {
        case .scalar(let scalar):
            bytes.append(0)
            place(node.location, to: &bytes)
            bytes.append(kindCode(scalar.kind) | (scalar.quoted ? quotedBit : 0))
            text(scalar.text, to: &bytes)
        case .list(let items):
            bytes.append(1)
            place(node.location, to: &bytes)
            number(items.count, to: &bytes)
            for item in items { write(item, to: &bytes) }
        case .map(let entries):
            bytes.append(2)
            place(node.location, to: &bytes)
            number(entries.count, to: &bytes)
            for entry in entries {
                text(entry.key, to: &bytes)
                place(entry.keyLocation, to: &bytes)
                write(entry.value, to: &bytes)
            }
        }
    }

    private static func place(_ location: ConfigLocation, to bytes: inout [UInt8]) {
        number(location.line, to: &bytes)
        number(location.column, to: &bytes)
    }

    private static func text(_ text: String, to bytes: inout [UInt8]) {
        number(text.utf8.count, to: &bytes)
        bytes.append(contentsOf: text.utf8)
    }

    private static func number(_ value: Int, to bytes: inout [UInt8]) {
        var rest = UInt(max(value, 0))
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    private static let kinds: [ConfigScalar.Kind] = [.text, .integer, .float, .boolean, .null]
    /// Set in a scalar's kind byte when it was written between quotes.
    private static let quotedBit: UInt8 = 0x10
    private static func kindCode(_ kind: ConfigScalar.Kind) -> UInt8 { UInt8(kinds.firstIndex(of: kind) ?? 0) }

    /// The tree in `data`, its locations in `file`; nil unless `data` is exactly one
    /// well-formed tree of at most `maxNodes` nodes.
    static func decode(_ data: Data, file: String, maxNodes: Int) -> ConfigNode? {
        data.withUnsafeBytes { raw -> ConfigNode? in
            var reader = Reader(bytes: raw, file: file, budget: maxNodes)
            guard let node = reader.node(depth: 0), reader.offset == raw.count else { return nil }
            return node
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let file: String
        var budget: Int
        var offset = 0

        init(bytes: UnsafeRawBufferPointer, file: String, budget: Int) {
            self.bytes = bytes
            self.file = file
            self.budget = budget
        }

        /// Deeper than any Sources.yml nests; a damaged file cannot recurse without end.
        static let maxDepth = 64

        mutating func node(depth: Int) -> ConfigNode? {
            budget -= 1
            guard budget >= 0, depth < Self.maxDepth, let tag = byte(), let location = place() else { return nil }
            switch tag {
            case 0:
                guard let code = byte(), Int(code & ~quotedBit) < kinds.count, let text = text() else { return nil }
                return ConfigNode(.scalar(ConfigScalar(text: text, kind: kinds[Int(code & ~quotedBit)], quoted: code & quotedBit != 0)), at: location)
            case 1:
                guard let count = number(), count <= budget else { return nil }
                var items: [ConfigNode] = []
                items.reserveCapacity(count)
                for _ in 0..<count {
                    guard let item = node(depth: depth + 1) else { return nil }
                    items.append(item)
                }
                return ConfigNode(.list(items), at: location)
            case 2:
                guard let count = number(), count <= budget else { return nil }
                var entries: [ConfigEntry] = []
                entries.reserveCapacity(count)
                for _ in 0..<count {
                    budget -= 1
                    guard budget >= 0, let key = text(), let keyLocation = place(), let value = node(depth: depth + 1) else { return nil }
                    entries.append(ConfigEntry(key: key, keyLocation: keyLocation, value: value))
                }
                return ConfigNode(.map(entries), at: location)
            default:
                return nil
            }
        }

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func number() -> Int? {
            var value = 0
            var shift = 0
            while let byte = byte() {
                guard shift < 56 else { return nil }
                value |= Int(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }

        mutating func place() -> ConfigLocation? {
            guard let line = number(), let column = number() else { return nil }
            return ConfigLocation(file: file, line: line, column: column)
        }

        mutating func text() -> String? {
            guard let count = number(), count <= bytes.count - offset else { return nil }
            defer { offset += count }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]), as: UTF8.self)
        }
    }
}
