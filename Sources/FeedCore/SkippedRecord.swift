import Foundation

/// An upstream record that could not become a card, and why, in plain words.
public struct SkippedRecord: Sendable, Hashable, CustomStringConvertible {
    /// JSON path of the record, e.g. `products[0]`.
    public var path: String
    /// e.g. `name is a number, expected text`.
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "skipped \(path): \(reason)" }
}
