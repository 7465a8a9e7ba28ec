import Foundation

/// A list bound as one JSON array and read with `json_each(?)`: one statement and one
/// bound value however long the list (SQLite binds at most 32,766 values).
enum JSONList {
    static func text<Element: Encodable>(_ values: [Element]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(values), as: UTF8.self)
    }
}
