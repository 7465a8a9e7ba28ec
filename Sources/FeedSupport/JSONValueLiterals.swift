import FeedCore
import Foundation

/// `["price": 7.5, "tags": ["a"]]` as a ``JSONValue``: for sources' mappings and tests.
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByFloatLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Decimal(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// Goes through the shortest text form so `7.5` is exactly `7.5`.
    public init(floatLiteral value: Double) { self = .number(Decimal(string: "\(value)") ?? Decimal(value)) }
}
