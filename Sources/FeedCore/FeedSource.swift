import Foundation

/// The contract a source module fulfils. One type per upstream API; the engine
/// creates one instance per configured source and drives its paging.
public protocol FeedSource: Sendable {
    /// The `plugin:` name in Sources.yml (`cabify`, `target-deals`).
    static var plugin: String { get }

    /// Responses recorded from the real upstream, shipped inside the binary and served
    /// by `--offline` and the `snapshot` fallback. Served only for these exact URLs, so a
    /// source pointed at another URL never receives this upstream's data.
    static var snapshots: [RecordedResponse] { get }

    /// Validates the source's own options and keeps what it needs. Must not do I/O.
    /// Throws ``ConfigIssues`` naming every bad option with its line and column.
    init(settings: SourceSettings, http: any HTTPTransport) throws

    /// The page after `cursor` (`nil` = the first page). The cursor is opaque to the
    /// engine; a source that is a single list returns everything with `next == nil`.
    func page(after cursor: String?) async throws -> SourcePage

    /// One card with the upstream's detail data. Throws ``SourceError/notFound(_:)``
    /// for an unknown id, ``SourceError/noDetail(_:)`` when the upstream has no detail
    /// for an item that exists, and ``SourceError/noDetailEndpoint`` (the default) when
    /// it has no detail endpoint at all; the engine then finds the card in the pages.
    func detail(id: String) async throws -> Card
}

/// A source whose upstream is a local program rather than an HTTP server
/// (`plugin: exec`). The engine puts the same retries, deadline, cache and fallbacks
/// around the transport it returns as around the network, so its pages are cached and
/// served offline like any other; `url:` is optional for it.
public protocol LocalUpstreamSource: FeedSource {
    /// The transport that plays the live upstream for a source with these settings.
    static func liveTransport(settings: SourceSettings) -> any HTTPTransport
}


extension FeedSource {
    public func detail(id: String) async throws -> Card {
        throw SourceError.noDetailEndpoint
    }
}

/// One page of a source's feed.
public struct SourcePage: Sendable {
    public var cards: [Card]
    /// Opaque cursor of the next page; `nil` when this is the last page.
    public var next: String?
    /// The upstream's total number of items, when it says.
    public var total: Int?
    /// Records on this page that could not become cards.
    public var skipped: [SkippedRecord]
    /// Things worth telling under `--verbose` (a post whose profile is missing).
    public var notes: [String]

    public init(cards: [Card], next: String? = nil, total: Int? = nil,
                skipped: [SkippedRecord] = [], notes: [String] = []) {
        self.cards = cards
        self.next = next
        self.total = total
        self.skipped = skipped
        self.notes = notes
    }
}

/// What Sources.yml says about one source, as its module sees it.
public struct SourceSettings: Sendable {
    /// The source id (`cabify`); prefix of every card id.
    public var id: String
    /// The upstream base URL from `url:`.
    public var url: URL
    /// The `options:` mapping, for the module to read and validate.
    public var options: ConfigNode?
    /// Where the source's entry is, for messages: `sources[4]`.
    public var path: String
    /// Where `options:` is (or the entry, when absent), for messages.
    public var location: ConfigLocation
    /// The source's per-request `timeout` in seconds.
    public var timeout: Double
    /// The folder of the Sources.yml this entry is in: relative paths in options resolve
    /// against it.
    public var directory: URL
    /// The process environment, for `${VAR}` in options that hold secrets.
    public var environment: [String: String]
    /// The source's `max_items`: a page never needs to hold more cards than this.
    public var maxItems: Int = .max
    /// Reads the upstream's JSON bodies.
    public var json: any JSONBodyReader

    public init(id: String, url: URL, options: ConfigNode? = nil,
                path: String = "source", location: ConfigLocation = ConfigLocation(file: "Sources.yml", line: 1, column: 1),
                timeout: Double = 10, directory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
                environment: [String: String], json: any JSONBodyReader) {
        self.id = id
        self.url = url
        self.options = options
        self.path = path
        self.location = location
        self.timeout = timeout
        self.directory = directory
        self.environment = environment
        self.json = json
    }

    /// Whether `url:` was given as an http(s) URL (a `plugin: exec` entry may leave it out).
    public var hasHTTPURL: Bool {
        ["http", "https"].contains(url.scheme?.lowercased() ?? "")
    }

    /// A reader over `options:` that reports problems under `<path>.options`.
    public func optionsReader() -> ConfigMapReader {
        ConfigMapReader(node: options, path: "\(path).options", fallbackLocation: location, issues: ConfigIssueLog())
    }
}

/// A response recorded from the real upstream.
public struct RecordedResponse: Sendable {
    /// The absolute URL it answers, exactly as the source requests it.
    public var url: String
    public var status: Int
    public var body: Data

    public init(url: String, status: Int = 200, body: Data) {
        self.url = url
        self.status = status
        self.body = body
    }

    public init(url: String, status: Int = 200, bytes: [UInt8]) {
        self.init(url: url, status: status, body: Data(bytes))
    }
}
