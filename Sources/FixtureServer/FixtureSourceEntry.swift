import Foundation

/// A Sources.yml entry that points a source at one of this server's routes.
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

extension FixtureServer {
    /// The standard upstreams' entries, one source per upstream.
    public static let standardSources: [FixtureSourceEntry] = [
        FixtureSourceEntry(id: "target", plugin: "target-deals", path: "/target", route: "target"),
        FixtureSourceEntry(id: "ltk", plugin: "ltk", path: "/ltk/api/ltk/v2/ltks/?featured=true&limit=20", route: "ltk"),
        FixtureSourceEntry(id: "users", plugin: "reqres", path: "/reqres", route: "reqres",
                           extraYAML: "    headers:\n      x-api-key: ${REQRES_API_KEY:-reqres-free-v1}\n"),
        FixtureSourceEntry(id: "dishwashers", plugin: "dishwashers", path: "/dishwasher/api/search-valid-response.json",
                           route: "dishwasher", extraYAML: """
                               options:
                                 detail_url: {base}/dishwasher/api/product-search-response.json
                                 image_base: {base}/dishwasher/images/

                           """),
        FixtureSourceEntry(id: "cabify", plugin: "cabify", path: "/cabify/Products.json", route: "cabify"),
    ]

    /// A complete Sources.yml of `entries` for a server at `base`; `extra[id]` adds lines.
    public static func sourcesYml(base: URL, entries: [FixtureSourceEntry] = standardSources,
                                  extra: [String: String] = [:]) -> String {
        "# Every source pointed at fixture-server on \(base.absoluteString)\nsources:\n"
            + entries.map { $0.yaml(base: base) + (extra[$0.id] ?? "") }.joined()
    }
}
