import Foundation

/// The `Decoder` a wire model's `init(from:)` gets: one value of the tape, and where it
/// is (its parent decoder and key: the coding path is worked out only for an error).
final class TapeDecoder: Decoder {
    let document: TapeDocument
    let index: Int
    let parent: TapeDecoder?
    let key: (any CodingKey)?

    init(document: TapeDocument, index: Int, parent: TapeDecoder?, key: (any CodingKey)?) {
        self.document = document
        self.index = index
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] { Self.path(parent, key) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// `parent`'s coding path followed by `key`.
    static func path(_ parent: TapeDecoder?, _ key: (any CodingKey)?) -> [any CodingKey] {
        var keys: [any CodingKey] = key.map { [$0] } ?? []
        var node = parent
        while let current = node {
            if let key = current.key { keys.append(key) }
            node = current.parent
        }
        return keys.reversed()
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let entry = document.entry(index)
        guard entry.kind == .object else { throw containerMismatch([String: Any].self, entry, "keyed") }
        return KeyedDecodingContainer(TapeKeyedContainer<Key>(decoder: self, object: index))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let entry = document.entry(index)
        guard entry.kind == .array else { throw containerMismatch([Any].self, entry, "unkeyed") }
        return TapeUnkeyedContainer(decoder: self, array: index, count: document.tape.count(of: index))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        TapeSingleValueContainer(decoder: self)
    }

    private func containerMismatch(_ type: Any.Type, _ entry: JSONTape.Entry, _ name: String) -> DecodingError {
        if entry.kind == .null {
            return .valueNotFound(type, .init(codingPath: codingPath, debugDescription: "Cannot get \(name) decoding container -- found null value instead"))
        }
        return .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "Expected to decode \(type) but found \(TapeDocument.describe(entry.kind)) instead."))
    }
}

/// An array element's place in a coding path, as Foundation writes it.
struct TapeIndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }

    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

/// A member key that is not one of a model's `CodingKeys` (`superDecoder()`).
private struct TapeNamedKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

struct TapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: TapeDecoder
    /// The tape index of the object.
    let object: Int

    private var document: TapeDocument { decoder.document }
    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        var keys: [Key] = []
        forEachMember { keyIndex in
            if let name = try? document.string(at: keyIndex, { [] }), let key = Key(stringValue: name) { keys.append(key) }
            return false
        }
        return keys
    }

    func contains(_ key: Key) -> Bool {
        valueIndex(for: key) != nil
    }

    /// Calls `body` with each member's key index until it returns true.
    private func forEachMember(_ body: (Int) -> Bool) {
        let tape = document.tape
        let end = Int(tape.entries[object].start)
        var child = object + 1
        while child < end {
            if body(child) { return }
            child = tape.next(after: child + 1)
        }
    }

    /// The tape index of `key`'s value: the first member of that name, as with Foundation.
    /// A wire model asks for a dozen keys of objects with dozens: one tight loop over the
    /// member entries, comparing bytes in place where both names are plain text.
    private func valueIndex(for key: Key) -> Int? {
        var name = key.stringValue
        let document = document
        let object = object
        return name.withUTF8 { wanted in
            let wantedIsPlain = !wanted.isEmpty && !wanted.contains(UInt8(ascii: "\"")) && !wanted.contains(UInt8(ascii: "\\"))
            return document.tape.entries.withUnsafeBufferPointer { entries -> Int? in
                let end = Int(entries[object].start)
                var child = object + 1
                while child < end {
                    let entry = entries[child]
                    if entry.isPlainString && wantedIsPlain {
                        if document.plainKey(entry, equals: wanted) { return child + 1 }
                    } else if (try? document.string(at: child, { [] })) == key.stringValue {
                        return child + 1
                    }
                    let value = entries[child + 1]
                    child = value.isContainer ? Int(value.start) : child + 2
                }
                return nil
            }
        }
    }

    private func value(for key: Key) throws -> Int {
        guard let index = valueIndex(for: key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath,
                                                       debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return index
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        document.entry(try value(for: key)).kind == .null
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try required(T.self, key)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try present(T.self, key)
    }

    // The standard library's per-type requirements, routed to the generic ones.
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try required(Bool.self, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try required(String.self, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try required(Double.self, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try required(Float.self, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try required(Int.self, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try required(Int8.self, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try required(Int16.self, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try required(Int32.self, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try required(Int64.self, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try required(UInt.self, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try required(UInt8.self, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try required(UInt16.self, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try required(UInt32.self, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try required(UInt64.self, key) }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try present(Bool.self, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try present(String.self, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try present(Double.self, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try present(Float.self, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try present(Int.self, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try present(Int8.self, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try present(Int16.self, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try present(Int32.self, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try present(Int64.self, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try present(UInt.self, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try present(UInt8.self, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try present(UInt16.self, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try present(UInt32.self, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try present(UInt64.self, key) }

    /// The generic forms under names of their own: inside a per-type requirement,
    /// `decode(Bool.self, forKey:)` would call that requirement again.
    private func required<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        try document.decode(T.self, at: try value(for: key), parent: decoder, key: key)
    }

    private func present<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        guard let index = valueIndex(for: key), document.entry(index).kind != .null else { return nil }
        return try document.decode(T.self, at: index, parent: decoder, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try TapeDecoder(document: document, index: try value(for: key), parent: decoder, key: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try TapeDecoder(document: document, index: try value(for: key), parent: decoder, key: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        try child(TapeNamedKey(stringValue: "super"))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try child(key)
    }

    /// Foundation gives a missing key's super decoder a null value.
    private func child(_ key: some CodingKey) throws -> any Decoder {
        guard let index = Key(stringValue: key.stringValue).flatMap(valueIndex(for:)) else {
            throw document.leaveToFoundation()
        }
        return TapeDecoder(document: document, index: index, parent: decoder, key: key)
    }
}

struct TapeUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: TapeDecoder
    let array: Int
    let count: Int?
    private(set) var currentIndex = 0
    /// The tape index of the element at `currentIndex`.
    private var position: Int

    init(decoder: TapeDecoder, array: Int, count: Int) {
        self.decoder = decoder
        self.array = array
        self.count = count
        self.position = array + 1
    }

    private var document: TapeDocument { decoder.document }
    var codingPath: [any CodingKey] { decoder.codingPath }
    var isAtEnd: Bool { currentIndex >= (count ?? 0) }

    private mutating func advance() {
        position = document.tape.next(after: position)
        currentIndex += 1
    }

    private func atEnd(_ type: Any.Type) -> DecodingError {
        .valueNotFound(type, .init(codingPath: codingPath + [TapeIndexKey(currentIndex)], debugDescription: "Unkeyed container is at end."))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { throw atEnd(Any?.self) }
        guard document.entry(position).kind == .null else { return false }
        advance()
        return true
    }

    /// A failed decode leaves the container on the same element (``LenientList`` relies
    /// on it, as Foundation's container behaves).
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try element(T.self)
    }

    // The standard library's per-type requirements, routed to the generic one.
    mutating func decode(_ type: Bool.Type) throws -> Bool { try element(Bool.self) }
    mutating func decode(_ type: String.Type) throws -> String { try element(String.self) }
    mutating func decode(_ type: Double.Type) throws -> Double { try element(Double.self) }
    mutating func decode(_ type: Float.Type) throws -> Float { try element(Float.self) }
    mutating func decode(_ type: Int.Type) throws -> Int { try element(Int.self) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try element(Int8.self) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try element(Int16.self) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try element(Int32.self) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try element(Int64.self) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try element(UInt.self) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try element(UInt8.self) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try element(UInt16.self) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try element(UInt32.self) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try element(UInt64.self) }

    private mutating func element<T: Decodable>(_ type: T.Type) throws -> T {
        guard !isAtEnd else { throw atEnd(T.self) }
        let value = try document.decode(T.self, at: position, parent: decoder, key: TapeIndexKey(currentIndex))
        advance()
        return value
    }

    private mutating func elementDecoder() throws -> TapeDecoder {
        guard !isAtEnd else { throw atEnd(Any.self) }
        return TapeDecoder(document: document, index: position, parent: decoder, key: TapeIndexKey(currentIndex))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let container = try elementDecoder().container(keyedBy: type)
        advance()
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = try elementDecoder().unkeyedContainer()
        advance()
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let element = try elementDecoder()
        advance()
        return element
    }
}

struct TapeSingleValueContainer: SingleValueDecodingContainer {
    let decoder: TapeDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool {
        decoder.document.entry(decoder.index).kind == .null
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try value(T.self)
    }

    // The standard library's per-type requirements, routed to the generic one.
    func decode(_ type: Bool.Type) throws -> Bool { try value(Bool.self) }
    func decode(_ type: String.Type) throws -> String { try value(String.self) }
    func decode(_ type: Double.Type) throws -> Double { try value(Double.self) }
    func decode(_ type: Float.Type) throws -> Float { try value(Float.self) }
    func decode(_ type: Int.Type) throws -> Int { try value(Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { try value(Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { try value(Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { try value(Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try value(Int64.self) }
    func decode(_ type: UInt.Type) throws -> UInt { try value(UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try value(UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try value(UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try value(UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try value(UInt64.self) }

    private func value<T: Decodable>(_ type: T.Type) throws -> T {
        try decoder.document.decode(T.self, at: decoder.index, parent: decoder.parent, key: decoder.key)
    }
}
