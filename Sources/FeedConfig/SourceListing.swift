import Foundation

/// One configured source as `aggregate sources` and `serve`'s `/sources` list it: what it
/// is and where it points, with secrets redacted and header values left out.
public struct SourceListing: Encodable, Sendable {
    public var id: String
    /// Its `name:`, when it has one.
    public var name: String?
    public var plugin: String
    public var enabled: Bool
    public var url: String
    public var fallback: String
    public var headers: [String]
    /// The filter rules the source's cards pass through (`drop {…}`), the top-level ones
    /// marked `(every source)`; absent when there are none.
    public var filters: [String]?

    public static let header = ["id", "plugin", "enabled", "url", "fallback", "headers", "filters"]
    public var cells: [String] {
        [id, plugin, "\(enabled)", url, fallback, headers.joined(separator: "; "), (filters ?? []).joined(separator: "; ")]
    }

    /// What marks a top-level rule among a source's.
    public static let everySourceMark = " (every source)"

    /// `everySource` is the top-level `filters:`.
    public init(_ source: SourceConfig, everySource: CardFilter = CardFilter()) {
        let rules = source.filters.lines + everySource.lines.map { $0 + Self.everySourceMark }
        filters = rules.isEmpty ? nil : rules
        id = source.id
        name = source.name
        plugin = source.plugin
        enabled = source.enabled
        url = source.url.redactedString
        fallback = source.fallback.rawValue
        headers = source.headers.keys.sorted()
    }
}
