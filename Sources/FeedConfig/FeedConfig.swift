import FeedCore
import FeedSupport
import FeedFormats
import Foundation

/// A validated Sources.yml.
public struct FeedConfig: Sendable {
    /// The file as named in messages (`Sources.yml`, `/etc/aggregate/Sources.yml`).
    public var file: String
    /// Every configured source, in file order (the order `feed` interleaves them in).
    public var sources: [SourceConfig] {
        didSet { places = Self.places(sources) }
    }
    /// Each source's place in ``sources`` by id: a lookup per source of a request was
    /// quadratic in a Sources.yml of 500 feeds.
    private var places: [String: Int]
    /// Declared digests (`digests:`).
    public var digests: [DigestConfig]
    /// The optional `feed:` block: what feed readers see as the feed's title, link and id.
    public var feed: FeedInfo
    /// The optional `state:` key: where the cache and digest state live (a directory,
    /// relative to this file, or a `postgres://` URL; `${VAR}` is expanded).
    public var state: StateLocation?
    /// The top-level `filters:`, applied to every source's cards.
    public var filters: CardFilter
    /// The top-level `keep:`: how long the card store keeps a source's cards unless the
    /// source says otherwise.
    public var keep = KeepPolicy.default
    /// `defaults: refresh:`: how often `serve` refreshes a source without its own (nil:
    /// each at its cache TTL).
    public var defaultRefresh: Double?
    /// `merge: same-item`: every output shows one card per item across sources (else only
    /// with `--merge`, and in the reader's views).
    public var mergesSameItems = false
    /// What is not wrong yet but will be (a disabled source's unset variable): `validate`
    /// prints these.
    public var warnings: [ConfigIssue] = []

    public init(file: String, sources: [SourceConfig], digests: [DigestConfig] = [], feed: FeedInfo = FeedInfo(),
                state: StateLocation? = nil, filters: CardFilter = CardFilter()) {
        self.filters = filters
        self.file = file
        self.sources = sources
        places = Self.places(sources)
        self.digests = digests
        self.feed = feed
        self.state = state
    }

    /// What a reload of the file changed, source by source (``SourceConfig/definition``).
    public func changes(to new: FeedConfig) -> ConfigChanges {
        var changes = ConfigChanges()
        for source in new.sources {
            if let old = self.source(id: source.id) {
                if old.definition != nil, old.definition == source.definition { changes.unchanged.append(source.id) } else { changes.changed.append(source.id) }
            } else {
                changes.added.append(source.id)
            }
        }
        changes.removed = sources.map(\.id).filter { new.source(id: $0) == nil }
        return changes
    }

    /// How long the card store keeps `source`'s cards.
    public func keepPolicy(for source: String) -> KeepPolicy {
        self.source(id: source)?.keep ?? keep
    }

    public func digest(named name: String) -> DigestConfig? {
        digests.first { $0.name == name }
    }

    public func source(id: String) -> SourceConfig? {
        places[id].map { sources[$0] }
    }

    /// What people see for the source `id`: its `name:`, else the id itself.
    public func sourceName(_ id: String) -> String {
        source(id: id)?.displayName ?? id
    }

    /// The first place of each id (validation rejects a second).
    private static func places(_ sources: [SourceConfig]) -> [String: Int] {
        var places: [String: Int] = [:]
        for (place, source) in sources.enumerated() where places[source.id] == nil { places[source.id] = place }
        return places
    }
}

/// The sources a reloaded Sources.yml added, removed, changed and left as they were.
public struct ConfigChanges: Sendable, Equatable, CustomStringConvertible {
    public var added: [String] = []
    public var removed: [String] = []
    public var changed: [String] = []
    public var unchanged: [String] = []

    public init() {}

    /// Whether any source differs.
    public var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }

    /// `1 added (blog), 1 changed (ltk), 4 unchanged`.
    public var description: String {
        let parts = [("added", added), ("removed", removed), ("changed", changed)].filter { !$0.1.isEmpty }
            .map { "\($0.1.count) \($0.0) (\($0.1.joined(separator: ", ")))" }
        return (parts + ["\(unchanged.count) unchanged"]).joined(separator: ", ")
    }
}

/// What the engine serves when a source's live upstream fails.
public enum FallbackPolicy: String, Sendable, CaseIterable {
    /// Nothing: the source fails.
    case none
    /// The last good cached response.
    case cache
    /// The cached response, then the recorded snapshot shipped in the binary.
    case snapshot
}

/// One entry of `sources:`.
public struct SourceConfig: Sendable {
    public var id: String
    /// `name:`: what people see for the source; nil shows ``id``.
    public var name: String?
    public var plugin: String
    public var enabled: Bool
    public var url: URL
    /// Request headers after `${VAR}` expansion. Values are secrets: never printed.
    public var headers: [String: String]
    /// Per-request timeout in seconds.
    public var timeout: Double
    /// At most this many upstream pages per run.
    public var maxPages: Int
    /// At most this many cards per run.
    public var maxItems: Int
    public var fallback: FallbackPolicy
    /// Tries per request, the first included.
    public var retries: Int
    /// Seconds a cached response is served without asking the upstream.
    public var cacheTTL: Double
    /// `serve` fetches the source again about this often (`refresh:`); nil = `cache_ttl`.
    public var refresh: Double?
    /// `record: false` keeps the source's cards out of the card store.
    public var record = true
    /// `full_content:`: each new card's article fetched from its link (nil: the source's own text).
    public var fullContent: FullContent?
    /// How long the card store keeps this source's cards (`keep:`, over the top level's).
    public var keep = KeepPolicy.default
    /// Seconds the live upstream may take for the whole run (every page, retry and
    /// backoff); past it the source fails (or falls back) and the others print.
    public var deadline: Double
    /// The largest response body accepted, in bytes (`max_body: 64MiB`).
    public var maxBody: Int
    /// A disabled source's `${VAR}`s that are not set (they stand in as `unset`): it
    /// cannot run until they are.
    public var unsetVariables: [String] = []
    /// The plugin's own `options:`; validated by the plugin.
    public var options: ConfigNode?
    /// The source's own `filters:` (the top-level ones apply too).
    public var filters: CardFilter
    /// The entry as written, when loaded from a file: what a reload compares to tell
    /// whether the source changed.
    public var definition: SourceDefinition?
    /// `sources[2]`, for messages.
    public var path: String
    public var location: ConfigLocation
    /// The folder of the Sources.yml the entry is in.
    public var directory: URL
    /// The environment `${VAR}` in the source's options expand from.
    public var environment: [String: String]

    public static let defaultTimeout = 10.0
    public static let defaultMaxPages = 10
    public static let defaultMaxItems = 1000
    public static let defaultRetries = 3
    public static let defaultCacheTTL = 300.0
    public static let defaultDeadline = 60.0
    public static let defaultMaxBody = 20 * 1024 * 1024

    /// What Sources.yml accepts, checked at load time so no number reaches arithmetic
    /// that could trap or a wait that never ends.
    public enum Limits {
        public static let timeout = 0.1...3600.0
        public static let cacheTTL = 0.0...31_536_000.0
        public static let deadline = 1.0...86_400.0
        public static let maxPages = 10_000
        public static let maxItems = 1_000_000
        public static let retries = 10
        public static let maxBody = 1024...(4 << 30)
    }

    public init(
        id: String, plugin: String, enabled: Bool = true, url: URL, headers: [String: String] = [:],
        timeout: Double = SourceConfig.defaultTimeout, maxPages: Int = SourceConfig.defaultMaxPages,
        maxItems: Int = SourceConfig.defaultMaxItems, fallback: FallbackPolicy = .cache,
        retries: Int = SourceConfig.defaultRetries, cacheTTL: Double = SourceConfig.defaultCacheTTL,
        deadline: Double = SourceConfig.defaultDeadline, maxBody: Int = SourceConfig.defaultMaxBody,
        options: ConfigNode? = nil, filters: CardFilter = CardFilter(), path: String = "sources[0]",
        location: ConfigLocation = ConfigLocation(file: "Sources.yml", line: 1, column: 1),
        directory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.id = id
        self.plugin = plugin
        self.enabled = enabled
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.maxPages = maxPages
        self.maxItems = maxItems
        self.fallback = fallback
        self.retries = retries
        self.cacheTTL = cacheTTL
        self.deadline = deadline
        self.maxBody = maxBody
        self.options = options
        self.filters = filters
        self.path = path
        self.location = location
        self.directory = directory
        self.environment = environment
    }

    /// What people see for the source: its `name:`, else its id.
    public var displayName: String { name ?? id }

    /// What the source module is given.
    public var settings: SourceSettings {
        var settings = SourceSettings(id: id, url: url, options: options, path: path, location: options?.location ?? location,
                                      timeout: timeout, directory: directory, environment: environment,
                                      json: JSONBody(environment: environment))
        settings.maxItems = maxItems
        return settings
    }
}
