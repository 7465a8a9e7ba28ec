import Foundation

/// Any JSON value, for a card's source-specific `details` and for reading raw bodies.
/// Numbers are `Decimal` so that prices and ids survive exactly.
public enum JSONValue: Sendable, Hashable {
    case string(String)
    case number(Decimal)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    /// A plain-words name of the value's type, as used in skip messages.
    public var kindDescription: String {
        switch self {
        case .string: "text"
        case .number: "a number"
        case .bool: "true/false"
        case .array: "a list"
        case .object: "an object"
        case .null: "null"
        }
    }

    /// The member at `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}

extension JSONValue: Codable {
    /// The likeliest kinds first: each kind tried in vain is an error thrown and caught (and,
    /// under a test run, a backtrace captured: decoding details kept the test process's
    /// threads busy for seconds). A string costs none, a number one, an object two.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let value = try? c.decode(String.self) {
            self = .string(value)
        } else if let value = try? c.decode(Decimal.self) {
            self = .number(value)
        } else if let members = try Self.unlessOfAnotherKind(at: c.codingPath, { try c.decode([String: JSONValue].self) }) {
            self = .object(members)
        } else if let items = try Self.unlessOfAnotherKind(at: c.codingPath, { try c.decode([JSONValue].self) }) {
            self = .array(items)
        } else {
            self = .bool(try c.decode(Bool.self))
        }
    }

    /// `decode`'s value, or nil when the value at `path` itself is of another kind; what
    /// fails inside it (a number out of range in an object) is thrown, naming its place.
    private static func unlessOfAnotherKind<T>(at path: [any CodingKey], _ decode: () throws -> T) throws -> T? {
        do {
            return try decode()
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.count == path.count {
            return nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let value): try c.encode(value)
        case .number(let value): try c.encode(value)
        case .bool(let value): try c.encode(value)
        case .array(let value): try c.encode(value)
        case .object(let value): try c.encode(value)
        case .null: try c.encodeNil()
        }
    }
}
