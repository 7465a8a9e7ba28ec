import FeedCore
import FixtureKit
import Foundation

extension FixtureServer {
    /// Every upstream that `sources` use, from their recorded snapshots.
    public static func standard(_ sources: [any BuiltinSource.Type], control: FixtureControl = FixtureControl(),
                                options: FixtureOptions = FixtureOptions(), scale: Int = 1) -> FixtureServer {
        FixtureServer(upstreams: sources.map { $0.fixture(options) }, control: control, scale: scale)
    }

    /// The Sources.yml entries of `sources`, one or more per source, each pointed at its route.
    public static func standardEntries(_ sources: [any BuiltinSource.Type]) -> [FixtureSourceEntry] {
        sources.flatMap { $0.fixtureSources }
    }

    /// A complete Sources.yml of `entries` for a server at `base`; `extra[id]` adds lines.
    public static func sourcesYml(base: URL, entries: [FixtureSourceEntry], extra: [String: String] = [:]) -> String {
        "# Every source pointed at fixture-server on \(base.absoluteString)\nsources:\n"
            + entries.map { $0.yaml(base: base) + (extra[$0.id] ?? "") }.joined()
    }
}
