import FeedCore
import Foundation

/// A change to a route's recorded data, applied to every JSON answer of that route until
/// cleared: how tests drive real changes (a lower price, a new item) through HTTP.
public enum DataEdit: Codable, Sendable, Equatable {
    /// In the array `list`, on the items whose `key` equals `match`, set `field` (a dotted
    /// path, e.g. `sale_price.amount_in_cents`) to `value`.
    case set(list: String, key: String, match: String, field: String, value: JSONValue)
    /// Remove from `list` the items whose `key` equals `match`.
    case remove(list: String, key: String, match: String)
    /// Append `item` to `list`.
    case add(list: String, item: JSONValue)

    /// `body` with `edits` applied; unchanged when it is not a JSON object.
    static func apply(_ edits: [DataEdit], to body: Data) -> Data {
        guard !edits.isEmpty, case .object(var root)? = try? JSONDecoder().decode(JSONValue.self, from: body) else { return body }
        for edit in edits {
            switch edit {
            case .set(let list, let key, let match, let field, let value):
                root[list] = map(root[list]) { item in
                    matches(item, key, match) ? setting(item, path: field.split(separator: ".").map(String.init), to: value) : item
                }
            case .remove(let list, let key, let match):
                if case .array(let items)? = root[list] { root[list] = .array(items.filter { !matches($0, key, match) }) }
            case .add(let list, let item):
                if case .array(let items)? = root[list] { root[list] = .array(items + [item]) }
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(root)) ?? body
    }

    private static func map(_ list: JSONValue?, _ transform: (JSONValue) -> JSONValue) -> JSONValue? {
        guard case .array(let items)? = list else { return list }
        return .array(items.map(transform))
    }

    private static func matches(_ item: JSONValue, _ key: String, _ match: String) -> Bool {
        switch item[key] {
        case .string(let text)?: text == match
        case .number(let number)?: "\(number)" == match
        default: false
        }
    }

    private static func setting(_ value: JSONValue, path: [String], to newValue: JSONValue) -> JSONValue {
        guard let first = path.first else { return newValue }
        guard case .object(var members) = value else { return value }
        members[first] = setting(members[first] ?? .object([:]), path: Array(path.dropFirst()), to: newValue)
        return .object(members)
    }
}
