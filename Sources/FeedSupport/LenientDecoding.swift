import FeedCore
import Foundation

/// A JSON array decoded element by element: elements that fail to decode are kept
/// aside as ``SkippedRecord``s instead of failing the whole body.
public struct LenientList<Element: Decodable>: Decodable {
    public var elements: [Element]
    public var skipped: [SkippedRecord]

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        let listPath = JSONPath.render(decoder.codingPath)
        elements = []
        skipped = []
        // The decoders know the length: no doubling buffer, whose old and new copies of 5,000
        // wire records were both alive while it grew.
        elements.reserveCapacity(container.count ?? 0)
        while !container.isAtEnd {
            let index = container.currentIndex
            do {
                elements.append(try container.decode(Element.self))
            } catch let error as DecodingError {
                // A failed decode leaves the container on the same element; read it raw
                // to say what was actually there.
                let raw = try container.decode(JSONValue.self)
                let problem = DecodingProblem(error, in: raw, droppingPrefix: decoder.codingPath.count + 1)
                skipped.append(SkippedRecord(path: "\(listPath)[\(index)]", reason: problem.sentence))
            }
        }
    }
}

extension LenientList: Equatable where Element: Equatable {}

/// A `DecodingError` explained against the raw JSON it came from.
struct DecodingProblem {
    /// Path of the failing value from the root of `raw`'s document.
    var path: String
    /// Plain words: `name is a number, expected text`.
    var reason: String
    /// `reason` phrased for a record (`name is missing`).
    var sentence: String

    init(_ error: DecodingError, in raw: JSONValue, droppingPrefix prefix: Int = 0) {
        let context: DecodingError.Context
        let expected: String
        var field: [any CodingKey]
        switch error {
        case .typeMismatch(let type, let ctx):
            context = ctx
            expected = Self.describe(type)
            field = ctx.codingPath
        case .valueNotFound(let type, let ctx):
            context = ctx
            expected = Self.describe(type)
            field = ctx.codingPath
        case .keyNotFound(let key, let ctx):
            context = ctx
            expected = ""
            field = ctx.codingPath + [key]
        case .dataCorrupted(let ctx):
            context = ctx
            expected = ""
            field = ctx.codingPath
        @unknown default:
            self.path = ""
            self.reason = "\(error)"
            self.sentence = reason
            return
        }
        let relative = Array(field.dropFirst(prefix))
        let name = relative.isEmpty ? "the record" : JSONPath.render(relative)
        let found = JSONPath.lookup(relative, in: raw)
        path = JSONPath.render(field)
        switch error {
        case .keyNotFound:
            reason = "is missing"
        case .dataCorrupted:
            reason = context.debugDescription
        default:
            reason = "is \(found?.kindDescription ?? "missing"), expected \(expected)"
        }
        sentence = "\(name) \(reason)"
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type, is Substring.Type, is URL.Type: "text"
        case is Bool.Type: "true/false"
        case is Int.Type, is Double.Type, is Decimal.Type, is Float.Type, is Int64.Type: "a number"
        default:
            String(describing: type).hasPrefix("Array") ? "a list" : "an object"
        }
    }
}

/// Renders and follows coding paths as `products[0].name`.
enum JSONPath {
    static func render(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    static func lookup(_ path: [any CodingKey], in value: JSONValue) -> JSONValue? {
        var current = value
        for key in path {
            switch current {
            case .array(let items):
                guard let index = key.intValue, items.indices.contains(index) else { return nil }
                current = items[index]
            case .object(let members):
                guard let next = members[key.stringValue] else { return nil }
                current = next
            default:
                return nil
            }
        }
        return current
    }
}

/// An exact amount written either as a JSON number (`12.5`) or as plain numeric text
/// (`"12.50"`): upstreams do both. Anything else fails to decode, naming the field.
public struct LenientDecimal: Decodable, Sendable, Hashable {
    public var value: Decimal

    public init(_ value: Decimal) {
        self.value = value
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            guard let value = Money.parse(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an amount: \"\(text)\"")
            }
            self.value = value
        } else {
            value = try container.decode(Decimal.self)
        }
    }
}
