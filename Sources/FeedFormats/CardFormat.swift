import FeedCore
import Foundation

/// One way of printing cards (`--format NAME`, `serve`'s feed routes, digests). Adding a
/// format is one file with a type conforming to this, plus its line in ``CardFormats/all``.
public protocol CardFormat: Sendable {
    /// The `--format` value, e.g. `atom`.
    static var name: String { get }
    /// The HTTP `Content-Type` when served (`application/atom+xml; charset=utf-8`).
    static var mediaType: String { get }
    /// A few words for `--help`.
    static var summary: String { get }

    /// Whether this is a feed for feed readers (Atom, JSON Feed, RSS): its entries need a
    /// stable date, so cards without `published` are given the time they were first seen.
    static var isFeed: Bool { get }

    init()

    /// Writes `document` to `out`. Formats that can write card by card do, so that `out`
    /// streams a large feed in chunks instead of holding all of it.
    func write(_ document: FeedDocument, to out: inout FormattedOutput)
}

extension CardFormat {
    public static var isFeed: Bool { false }
}

/// What a format is asked to print: the cards and what surrounds them.
public struct FeedDocument: Sendable {
    public var cards: FeedCards
    /// Feed-level metadata for the feed formats (Atom, JSON Feed, RSS).
    public var info: FeedInfo
    /// Terminal width to fit text to; `nil` = no limit.
    public var width: Int?
    /// ANSI colour in text output.
    public var color: Bool
    /// When each card was first seen by this state, for entries without `published`.
    public var firstSeen: [String: Date]
    /// The card store's dates of each card, when the cards come from it (`--stored`).
    public var kept: [String: KeptDates] = [:]
    /// The cards are ordered by date: the text view shows each one's (`--sort date`).
    public var showsDates = false

    public init(cards: FeedCards, info: FeedInfo = FeedInfo(), width: Int? = nil, color: Bool = false,
                firstSeen: [String: Date] = [:]) {
        self.cards = cards
        self.info = info
        self.width = width
        self.color = color
        self.firstSeen = firstSeen
    }

    public init(cards: [Card], info: FeedInfo = FeedInfo(), width: Int? = nil, color: Bool = false,
                firstSeen: [String: Date] = [:]) {
        self.init(cards: FeedCards(cards), info: info, width: width, color: color, firstSeen: firstSeen)
    }
}

/// The feed as a feed reader sees it (Sources.yml's optional `feed:` block).
public struct FeedInfo: Sendable, Hashable {
    public var title: String
    /// The human page the feed stands for.
    public var link: URL?
    /// A stable id for the whole feed (Atom `<id>`); derived from the title when absent.
    public var id: String?
    /// The feed's own URL, when served (`rel="self"`).
    public var selfURL: URL?
    /// The newest change; the newest card date when absent.
    public var updated: Date?

    /// This feed narrowed by a query (`source=target&kind=deal`): a feed of its own, with
    /// its own id (the same for the same parameters in any order) and its own self link, so
    /// a reader subscribed to two filtered feeds sees two feeds.
    public func narrowed(by query: String?, selfURL: URL?) -> FeedInfo {
        var info = self
        info.selfURL = selfURL
        let pairs = URLComponents(string: "?" + (query ?? ""))?.percentEncodedQueryItems?
            .map { "\($0.name)=\($0.value ?? "")" }.sorted() ?? []
        if !pairs.isEmpty { info.id = FeedEntry.feedID(self) + "?" + pairs.joined(separator: "&") }
        return info
    }

    public init(title: String = "aggregate", link: URL? = nil, id: String? = nil, selfURL: URL? = nil, updated: Date? = nil) {
        self.title = title
        self.link = link
        self.id = id
        self.selfURL = selfURL
        self.updated = updated
    }
}

/// The one list of output formats.
public enum CardFormats {
    public static let all: [any CardFormat.Type] = [
        JSONLinesFormat.self, TextFormat.self, CSVFormat.self, TSVFormat.self,
        AtomFormat.self, JSONFeedFormat.self, RSSFormat.self,
    ]

    /// The format called `name`, or nil.
    public static func named(_ name: String) -> (any CardFormat.Type)? {
        all.first { $0.name == name }
    }

    /// `jsonl, text, csv, …` for help texts and errors.
    public static var names: [String] { all.map { $0.name } }

    /// Renders `document` whole (tests, `serve`, small outputs).
    public static func render(_ document: FeedDocument, as format: any CardFormat.Type) -> String {
        var out = FormattedOutput()
        format.init().write(document, to: &out)
        return String(decoding: out.finish(), as: UTF8.self)
    }
}

/// Formatted bytes on their way out. With a sink it hands every 64 KiB to the sink as it
/// fills (stdout of `--all` streams); without one it collects everything.
public struct FormattedOutput {
    public private(set) var buffer: [UInt8] = []
    private let sink: (([UInt8]) -> Void)?
    private let chunk: Int

    public init(chunk: Int = 64 * 1024, sink: (([UInt8]) -> Void)? = nil) {
        self.sink = sink
        self.chunk = chunk
        buffer.reserveCapacity(sink == nil ? 0 : chunk + 4096)
    }

    public mutating func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        flushIfFull()
    }

    public mutating func write(bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        flushIfFull()
    }

    /// Lets a writer append straight into the buffer (no intermediate copy).
    public mutating func append(_ body: (inout [UInt8]) -> Void) {
        body(&buffer)
        flushIfFull()
    }

    private mutating func flushIfFull() {
        guard let sink, buffer.count >= chunk else { return }
        sink(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Hands what is left to the sink and returns it (everything, without a sink).
    @discardableResult
    public mutating func finish() -> [UInt8] {
        let rest = buffer
        if let sink, !rest.isEmpty { sink(rest) }
        buffer.removeAll()
        return rest
    }
}
