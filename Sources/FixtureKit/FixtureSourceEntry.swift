import FeedCore
import Foundation

/// A Sources.yml entry that points a source at one of the fixture server's routes.
public struct FixtureSourceEntry: Sendable {
    public var id: String
    public var plugin: String
    /// Path (and query) below the server's base URL.
    public var path: String
    /// The fixture route whose faults and log lines belong to this source.
    public var route: String
    /// More YAML lines of the entry; `{base}` stands for the server's base URL.
    public var extraYAML: String

    public init(id: String, plugin: String, path: String, route: String, extraYAML: String = "") {
        self.id = id
        self.plugin = plugin
        self.path = path
        self.route = route
        self.extraYAML = extraYAML
    }

    /// The entry as YAML for a server at `base`.
    public func yaml(base: URL) -> String {
        """
          - id: \(id)
            plugin: \(plugin)
            url: \(base.absoluteString)\(path)

        """ + extraYAML.replacingOccurrences(of: "{base}", with: base.absoluteString)
    }
}
