import Foundation

/// One configured source as `aggregate sources` and `serve`'s `/sources` list it: what it
/// is and where it points, with secrets redacted and header values left out.
public struct SourceListing: Encodable, Sendable {
    public var id: String
    public var plugin: String
    public var enabled: Bool
    public var url: String
    public var fallback: String
    public var headers: [String]

    public static let header = ["id", "plugin", "enabled", "url", "fallback", "headers"]
    public var cells: [String] { [id, plugin, "\(enabled)", url, fallback, headers.joined(separator: "; ")] }

    public init(_ source: SourceConfig) {
        id = source.id
        plugin = source.plugin
        enabled = source.enabled
        url = source.url.redactedString
        fallback = source.fallback.rawValue
        headers = source.headers.keys.sorted()
    }
}
