import Cabify
import Foundation
import FixtureServer

/// One configured source backed by a fixture-server route.
struct FixtureSource {
    var id: String
    var plugin: String
    /// Path below the server's base URL.
    var path: String
    /// The fixture route whose faults hit this source.
    var route: String
    var extraYAML = ""
}

/// The fixture server with every standard upstream plus two extra Cabify shops, so a
/// run always has several independent sources.
enum FixtureWorld {
    static let sources: [FixtureSource] = [
        FixtureSource(id: "target", plugin: "target-deals", path: "/target", route: "target"),
        FixtureSource(id: "ltk", plugin: "ltk", path: "/ltk/api/ltk/v2/ltks/?featured=true&limit=20", route: "ltk"),
        FixtureSource(id: "users", plugin: "reqres", path: "/reqres", route: "reqres",
                      extraYAML: "    headers:\n      x-api-key: ${REQRES_API_KEY:-reqres-free-v1}\n"),
        FixtureSource(id: "dishwashers", plugin: "dishwashers", path: "/dishwasher/api/search-valid-response.json",
                      route: "dishwasher",
                      extraYAML: "    options:\n      detail_url: {base}/dishwasher/api/product-search-response.json\n      image_base: {base}/dishwasher/images/\n"),
        FixtureSource(id: "cabify", plugin: "cabify", path: "/cabify/Products.json", route: "cabify"),
        FixtureSource(id: "shop-a", plugin: "cabify", path: "/shop-a/Products.json", route: "shop-a",
                      extraYAML: "    options:\n      offers: []\n"),
        FixtureSource(id: "shop-b", plugin: "cabify", path: "/shop-b/Products.json", route: "shop-b",
                      extraYAML: "    options:\n      currency: GBP\n      offers: []\n"),
        FixtureSource(id: "shop-c", plugin: "cabify", path: "/shop-c/Products.json", route: "shop-c",
                      extraYAML: "    options:\n      offers: []\n"),
    ]

    /// The one source with this id, as a list for ``sourcesYml(base:sources:extra:)``.
    static func only(_ id: String) -> [FixtureSource] {
        sources.filter { $0.id == id }
    }

    static func server(reqresKey: String? = nil) -> FixtureServer {
        let standard = FixtureServer.standard(reqresKey: reqresKey)
        let products = CabifySource.snapshots[0].body
        return FixtureServer(upstreams: standard.upstreams + [
            NamedCabify(name: "shop-a", products: products), NamedCabify(name: "shop-b", products: products),
            NamedCabify(name: "shop-c", products: products),
        ])
    }

    /// A Sources.yml of `sources` at `base`; `extra[id]` adds YAML lines to that entry.
    static func sourcesYml(base: URL, sources: [FixtureSource] = sources, extra: [String: String] = [:]) -> String {
        "sources:\n" + sources.map { source in
            """
              - id: \(source.id)
                plugin: \(source.plugin)
                url: \(base.absoluteString)\(source.path)

            """ + source.extraYAML.replacingOccurrences(of: "{base}", with: base.absoluteString) + (extra[source.id] ?? "")
        }.joined()
    }
}

/// A second Cabify shop under its own route name.
struct NamedCabify: FixtureUpstream {
    let name: String
    let products: Data

    func respond(to request: FixtureRequest) -> FixtureResponse? {
        request.path == "/Products.json" ? .json(products) : nil
    }
}
