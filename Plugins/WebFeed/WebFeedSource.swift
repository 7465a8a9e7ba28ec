import FeedCore
import FeedSupport
import Foundation

/// Any RSS 0.9x/2.0, RSS 1.0, Atom 1.0/0.3 or JSON Feed 1.x document: one card per entry.
/// The format is told from the content (servers label feeds every which way); broken
/// real-world feeds are read liberally (``FeedBytes``); RFC 5005 `rel="next"` archives
/// are walked as pages under the usual budgets.
public struct WebFeedSource: SubscribableSource {
    public static let plugin = "feed"

    /// Hand-written in the shape of real feeds (Snapshots/README.md says which).
    public static let snapshots = [
        RecordedResponse(url: "https://blog.example.org/atom.xml", bytes: PackageResources.blog_atom_xml),
        RecordedResponse(url: "https://news.example.com/rss.xml", bytes: PackageResources.news_rss_xml),
        RecordedResponse(url: "https://podcast.example.net/feed.xml", bytes: PackageResources.podcast_xml),
    ]

    /// Characters a summary keeps by default.
    public static let defaultSummaryLength = 280

    let settings: SourceSettings
    let http: any HTTPTransport
    let cards: FeedCards

    public init(settings: SourceSettings, http: any HTTPTransport) throws {
        let options = settings.optionsReader()
        let kind = options.choice("kind", from: Card.Kind.allCases.map(\.rawValue)).flatMap(Card.Kind.init(rawValue:)) ?? .post
        let length = options.integer("summary_length", minimum: 40, maximum: 10_000) ?? Self.defaultSummaryLength
        var tags: [String] = []
        for (path, node) in options.list("tags") ?? [] {
            guard case .scalar(let scalar) = node.value, scalar.kind != .null, !scalar.text.isEmpty else {
                options.issues.report(ConfigIssue(location: node.location, path: path, message: "expected a tag (text), got \(node.kindDescription)"))
                continue
            }
            tags.append(scalar.text)
        }
        try options.finish(allowedKeys: ["kind", "summary_length", "tags"])
        self.settings = settings
        self.http = http
        cards = FeedCards(sourceID: settings.id, kind: kind, summaryLength: length, tags: tags)
    }

    /// Its feed URL, in folders of its `tags` option (what `aggregate import` wrote there).
    public static func subscription(_ settings: SourceSettings) -> (url: URL, folders: [String]) {
        let tags = settings.optionsReader().list("tags")?.compactMap { item -> String? in
            if case .scalar(let scalar) = item.node.value, scalar.kind != .null { scalar.text } else { nil }
        }
        return (settings.url, tags ?? [])
    }

    /// A feed when the body reads as one (its title), the feeds an HTML page advertises,
    /// or why it is neither.
    public static func discover(_ response: HTTPResponse, json: any JSONBodyReader) -> FeedDiscovery {
        let text = FeedBytes.text(response.body)
        if text.hasPrefix("<"), FeedBytes.isHTML(text) {
            let feeds = FeedBytes.advertisedFeeds(in: text, base: response.url)
            return feeds.isEmpty ? .neither("it is a web page that names no feed (no <link rel=\"alternate\"> to RSS, Atom or JSON Feed)") : .page(feeds)
        }
        do {
            let feed = try read(response.body, url: response.url, limit: 1, json: json)
            let title = feed.title.map { String(HTMLText.plain($0).prefix(200)) }
            return .feed(title: title?.isEmpty == false ? title : nil)
        } catch {
            return .neither((error as? SourceError)?.description ?? String(describing: error))
        }
    }

    public func page(after cursor: String?) async throws -> SourcePage {
        let url = cursor.flatMap { URL(string: $0) } ?? settings.url
        let response = try await http.get(url)
        guard response.isSuccess else { throw SourceError.badStatus(response.status) }
        let feed = try Self.read(response.body, url: response.url, limit: settings.maxItems, json: settings.json)
        var notes: [String] = []
        let cards = cards.cards(feed, url: response.url, notes: &notes)
        var next: String?
        if let archive = feed.next {
            if archive.host?.lowercased() == url.host?.lowercased() {
                next = archive.absoluteString
            } else {
                notes.append("the next archive page \(archive.redactedString) is on another host; not followed")
            }
        }
        return SourcePage(cards: cards, next: next, skipped: [], notes: notes)
    }

    /// The feed in `body`, whatever its format and encoding.
    static func read(_ body: Data, url: URL, limit: Int = .max, json: any JSONBodyReader) throws -> ParsedFeed {
        let text = FeedBytes.text(body)
        if JSONFeedReader.looksLikeJSONFeed(text) { return try JSONFeedReader.read(Data(text.utf8), url: url, limit: limit, json: json) }
        guard text.hasPrefix("<") else {
            throw SourceError.failed(text.isEmpty ? "the body is empty, not a feed" : "the body is not a feed (neither XML nor a JSON Feed)")
        }
        if FeedBytes.isHTML(text) {
            let feeds = FeedBytes.advertisedFeeds(in: text, base: url)
            throw SourceError.failed(feeds.isEmpty
                ? "the URL gives an HTML page, not a feed, and the page names no feed"
                : "the URL gives an HTML page, not a feed; the page names \(feeds.map(\.url.redactedString).joined(separator: ", ")): set url: to one")
        }
        do {
            return try XMLFeedReader.read(FeedBytes.xmlReferences(text), url: url, limit: limit)
        } catch .notAFeed(let root) {
            throw SourceError.failed("not a feed: the document is <\(root)>, where RSS, RDF or Atom was expected")
        } catch .malformed(let line, let reason) {
            throw SourceError.failed("the feed is not well-formed XML (line \(line): \(reason)); it may be cut short")
        }
    }
}
