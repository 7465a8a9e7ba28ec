import ArticleExtraction
import FeedConfig
import FeedCore
import FeedState
import FeedSupport
import Foundation
import HTMLQuery

/// `full_content:` of one source: each card the card store does not keep yet has its link
/// fetched once, and the article found there (``ArticleExtractor``) becomes the card's
/// content; a kept card carries the content stored with it, so a refresh neither fetches
/// its article again nor sees the card change. An article that cannot be had leaves the
/// card the source's own text, and the source's outcome says so (stderr, `/healthz`); the
/// card is then kept, and its link is not fetched again, as Miniflux does.
public struct WholeArticles: Sendable {
    public let rule: FullContent
    /// The source's network (its timeout, `max_body`, retries, the per-host limit; public
    /// addresses only off the source's own host); nil fetches nothing (offline, `serve`'s
    /// readers).
    public let network: (any HTTPTransport)?
    /// Where kept cards are looked up; nil: every card is new.
    public let store: (any CardStore)?

    /// Articles of one source fetched at once (each host also takes at most
    /// ``LiveHTTPTransport``'s per-host limit of every source together).
    public static let concurrency = 4
    /// Articles one source fetches in one run at most: a first refresh of a long feed
    /// fetches the newest this many, the rest keep the feed's text.
    public static let mostPerRun = 100

    public init(rule: FullContent, network: (any HTTPTransport)?, store: (any CardStore)?) {
        self.rule = rule
        self.network = network
        self.store = store
    }

    /// How a run's articles went, for the outcome.
    public struct Report: Sendable, Equatable {
        /// Articles fetched and stored as content.
        public var fetched = 0
        /// Articles that could not be had (their cards keep the source's text).
        public var failed = 0
        /// Cards past ``WholeArticles/mostPerRun`` not fetched.
        public var notTried = 0
        /// The first failures (``namedFailures`` of them), each with its address.
        public var failures: [String] = []
        /// Failures named one by one (`--verbose`); the rest are counted.
        public static let namedFailures = 10

        public var firstFailure: String? { failures.first }

        public init() {}

        mutating func fail(_ reason: String) {
            failed += 1
            if failures.count < Self.namedFailures { failures.append(reason) }
        }
    }

    /// `cards` with their articles: the stored content of kept ones, the fetched article of
    /// new ones with a web link.
    func fill(_ cards: [Card], report: inout Report) async -> [Card] {
        guard !cards.isEmpty else { return cards }
        var cards = cards
        var kept: [String: KeptCard] = [:]
        if let store {
            do {
                for card in try await store.cards(ids: cards.map(\.id)) { kept[card.card.id] = card }
            } catch {
                // Every card would look new: nothing is fetched until the store can be read.
                report.fail("the card store cannot be read (\(PlainWords.describe(error))); no article was fetched")
                return cards
            }
        }
        var wanted: [URL: [Int]] = [:]
        var order: [URL] = []
        for (index, card) in cards.enumerated() {
            if let stored = kept[card.id] {
                if let content = stored.card.details["content"] { cards[index].details["content"] = content }
                continue
            }
            guard network != nil, let url = card.url, url.isWebAddress else { continue }
            if wanted[url] == nil { order.append(url) }
            wanted[url, default: []].append(index)
        }
        guard let network, !order.isEmpty else { return cards }
        // The run's allowance: a long listing is accepted a page (or a remembered chunk) at a time.
        let tried = Array(order.prefix(max(0, Self.mostPerRun - report.fetched - report.failed)))
        report.notTried += order.count - tried.count
        let selector: HTMLQuery? = if case .selector(let query) = rule { query } else { nil }
        let results = Dictionary(await Self.fetch(tried, network: network, selector: selector), uniquingKeysWith: { first, _ in first })
        // In the listing's order, whichever finished first: the same run says the same.
        for url in tried {
            guard let result = results[url] else { continue }
            switch result {
            case .success(let article):
                report.fetched += 1
                for index in wanted[url] ?? [] { cards[index].details["content"] = .string(article) }
            case .failure(let failure):
                report.fail("\(failure.reason) (\(url.redactedString))")
            }
        }
        return cards
    }

    /// Why one article could not be had.
    struct ArticleFailure: Error {
        var reason: String
    }

    /// Each of `urls`' articles, ``concurrency`` at a time.
    static func fetch(_ urls: [URL], network: any HTTPTransport, selector: HTMLQuery?) async -> [(URL, Result<String, ArticleFailure>)] {
        await withTaskGroup(of: (URL, Result<String, ArticleFailure>).self) { group in
            var results: [(URL, Result<String, ArticleFailure>)] = []
            var next = urls.makeIterator()
            for _ in 0..<concurrency {
                guard let url = next.next() else { break }
                group.addTask { (url, await article(at: url, network: network, selector: selector)) }
            }
            while let result = await group.next() {
                results.append(result)
                if let url = next.next() {
                    group.addTask { (url, await article(at: url, network: network, selector: selector)) }
                }
            }
            return results
        }
    }

    /// The article at `url`: fetched, parsed in its charset, found, sanitized.
    static func article(at url: URL, network: any HTTPTransport, selector: HTMLQuery?) async -> Result<String, ArticleFailure> {
        do {
            let response = try await network.send(HTTPRequest(url: url, headers: ["Accept": "text/html,application/xhtml+xml"]))
            guard response.isSuccess else { return .failure(ArticleFailure(reason: "HTTP \(response.status)")) }
            let contentType = response.headers.first { $0.key.lowercased() == "content-type" }?.value
            if let contentType, !contentType.lowercased().contains("html") {
                return .failure(ArticleFailure(reason: "not a web page (\(contentType))"))
            }
            let page = try HTMLPage(response.body, url: response.url, contentType: contentType)
            return .success(try ArticleExtractor.article(of: page, selector: selector))
        } catch let failure as ArticleExtractor.Failure {
            return .failure(ArticleFailure(reason: failure.description))
        } catch let failure as HTMLPage.Failure {
            return .failure(ArticleFailure(reason: failure.description))
        } catch {
            return .failure(ArticleFailure(reason: PlainWords.describe(error)))
        }
    }
}
