import FeedCore
import FeedState
import FixtureCatalogue
import FixtureKit
import FixtureServer
import Foundation
import SourceCatalogue

/// The fixture server playing every catalogue source's upstream, plus three more shops
/// (copies of the Cabify route under other names) so a run always has several
/// independent sources.
public enum FixtureWorld {
    /// Route names of the extra shops; each is an independent source of the `cabify` plugin.
    public static let shops = ["shop-a", "shop-b", "shop-c"]

    public static let sources: [FixtureSourceEntry] = FixtureServer.standardEntries(FixtureCatalogue.sources) + shops.map { shop in
        FixtureSourceEntry(id: shop, plugin: "cabify", path: "/\(shop)/Products.json", route: shop,
                           extraYAML: "    options:\n      offers: []\n")
    }

    /// The one source with this id, as a list for ``sourcesYml(base:sources:extra:)``.
    public static func only(_ ids: String...) -> [FixtureSourceEntry] {
        sources.filter { ids.contains($0.id) }
    }

    /// ``only(_:)``, each entry enabled (the catalogue ships some disabled: the feeds, the
    /// exec example).
    public static func enabled(_ ids: String...) -> [FixtureSourceEntry] {
        sources.filter { ids.contains($0.id) }.map { entry in
            var entry = entry
            entry.extraYAML = entry.extraYAML.replacingOccurrences(of: "    enabled: false\n", with: "")
            return entry
        }
    }

    /// `scale` repeats every list upstream's items that many times.
    public static func server(options: FixtureOptions = FixtureOptions(), scale: Int = 1) -> FixtureServer {
        let standard = FixtureServer.standard(FixtureCatalogue.sources, options: options)
        let shop = standard.upstreams.first { $0.name == "cabify" }
        return FixtureServer(upstreams: standard.upstreams + shops.compactMap { name in
            shop.map { RenamedUpstream(name: name, upstream: $0) }
        }, scale: scale)
    }

    /// A request's `timeout` in every entry that does not set its own. Tests count the
    /// requests the fixture server saw, and a request that outlasts the shipped 10 s is
    /// rightly tried again: on a loaded CI machine (a run taking 70 s, a process 4 s to
    /// start) an `exec` program's page and a Cabify answer each once did, and were counted
    /// twice. A minute, the default `deadline`, is longer than any test waits on purpose.
    public static let requestTimeout = "    timeout: 60\n"

    /// A Sources.yml of `sources` at `base`; `extra[id]` adds YAML lines to that entry.
    public static func sourcesYml(base: URL, sources: [FixtureSourceEntry] = sources, extra: [String: String] = [:]) -> String {
        var extra = extra
        for entry in sources where !(entry.extraYAML + (extra[entry.id] ?? "")).contains("    timeout:") {
            extra[entry.id, default: ""] += requestTimeout
        }
        return FixtureServer.sourcesYml(base: base, entries: sources, extra: extra)
    }

    /// Starts the fixture world, writes a Sources.yml of `sources` into a fresh workspace
    /// (after `preamble`: top-level keys such as `filters:`), sets `faults` per route, and
    /// runs `body` with both; the server stops afterwards.
    public static func withSession<T: Sendable>(
        sources: [FixtureSourceEntry] = sources, extra: [String: String] = [:], preamble: String = "", faults: [String: [Fault]] = [:],
        options: FixtureOptions = FixtureOptions(), scale: Int = 1, state: StateKind = .sqlite,
        _ body: (FixtureSession) async throws -> T
    ) async throws -> T {
        let server = server(options: options, scale: scale)
        return try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: preamble + sourcesYml(base: base, sources: sources, extra: extra), state: state)
            for (route, list) in faults { server.control.set(route, list) }
            return try await body(FixtureSession(server: server, base: base, workspace: workspace))
        }
    }
}

/// One running fixture world and the workspace pointed at it.
public struct FixtureSession: Sendable {
    public let server: FixtureServer
    public let base: URL
    public let workspace: Workspace

    /// Runs `aggregate` in the workspace with its own state directory.
    public func run(_ arguments: String..., environment: [String: String] = [:]) async throws -> Binary.Run {
        try await workspace.run(arguments: arguments, environment: environment)
    }

    /// The requests the server has seen since it started (or since ``clearLog()``).
    public var requests: [LoggedRequest] { server.control.requests }

    public func clearLog() {
        server.control.clearLog()
    }
}

/// An upstream served under another route name (a second shop of the same kind).
public struct RenamedUpstream: FixtureUpstream {
    public let name: String
    let upstream: any FixtureUpstream

    public init(name: String, upstream: any FixtureUpstream) {
        self.name = name
        self.upstream = upstream
    }

    public func respond(to request: FixtureRequest) -> FixtureResponse? {
        upstream.respond(to: request)
    }
}
