import FeedCore
import Foundation

/// A source module compiled into the binary: its ``FeedSource`` plus what the fixture
/// server and the conformance suite need to play its upstream on 127.0.0.1. Every entry
/// of the source catalogue conforms; a module's folder holds all of it.
public protocol BuiltinSource: FeedSource {
    /// The fixture server's stand-in for this upstream, built from ``FeedSource/snapshots``
    /// and serving the upstream's real paging and errors.
    static func fixture(_ options: FixtureOptions) -> any FixtureUpstream

    /// Sources.yml entries that point this source at its fixture route: the standard
    /// fixture world, and the configuration the conformance suite runs the source with.
    static var fixtureSources: [FixtureSourceEntry] { get }
}

/// Settings of the fixture server that some routes honour.
public struct FixtureOptions: Sendable {
    /// Route name → the `x-api-key` that route demands (401 without it).
    public var requiredKeys: [String: String]

    public init(requiredKeys: [String: String] = [:]) {
        self.requiredKeys = requiredKeys
    }
}
