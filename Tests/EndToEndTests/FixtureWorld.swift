import Cabify
import Foundation
import FixtureServer

/// The fixture server's standard sources plus three extra Cabify shops, so a run always
/// has several independent sources.
enum FixtureWorld {
    static let sources: [FixtureSourceEntry] = FixtureServer.standardSources + ["shop-a", "shop-b", "shop-c"].map { shop in
        FixtureSourceEntry(id: shop, plugin: "cabify", path: "/\(shop)/Products.json", route: shop,
                           extraYAML: "    options:\n      offers: []\n")
    }

    /// The one source with this id, as a list for ``sourcesYml(base:sources:extra:)``.
    static func only(_ id: String) -> [FixtureSourceEntry] {
        sources.filter { $0.id == id }
    }

    static func server(reqresKey: String? = nil) -> FixtureServer {
        let standard = FixtureServer.standard(reqresKey: reqresKey)
        let products = CabifySource.snapshots[0].body
        return FixtureServer(upstreams: standard.upstreams + ["shop-a", "shop-b", "shop-c"].map {
            NamedCabify(name: $0, products: products)
        })
    }

    /// A Sources.yml of `sources` at `base`; `extra[id]` adds YAML lines to that entry.
    static func sourcesYml(base: URL, sources: [FixtureSourceEntry] = sources, extra: [String: String] = [:]) -> String {
        FixtureServer.sourcesYml(base: base, entries: sources, extra: extra)
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
