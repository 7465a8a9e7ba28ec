import FeedCore
import FeedSupport
import Foundation

/// The feed a URL someone wants to subscribe to stands for: the URL itself when it
/// answers a feed, else the one its page advertises (`<link rel="alternate">`). Shared by
/// `aggregate add` and the Google Reader API's subscribe. Fetches at most two URLs.
public struct FeedFinder: Sendable {
    /// Why no feed was found; the words name the URL (secrets redacted).
    public enum Failure: Error, Sendable, CustomStringConvertible {
        case unreachable(URL, String)
        case status(URL, Int)
        /// The URL answered neither a feed nor a page that advertises one (the person's
        /// mistake: exit 2 in `add`).
        case notAFeed(URL, String)
        /// A page named a URL as its feed, and that URL is not one.
        case advertisedIsNotAFeed(page: URL, feed: URL)

        public var description: String {
            switch self {
            case .unreachable(let url, let why): "cannot fetch \(url.redactedString): \(why)"
            case .status(let url, let status): "\(url.redactedString) answered HTTP \(status)"
            case .notAFeed(let url, let why): "\(url.redactedString) is not a feed: \(why)"
            case .advertisedIsNotAFeed(let page, let feed): "\(page.redactedString) names \(feed.redactedString) as a feed, but it is not one"
            }
        }
    }

    /// What was found: the feed's URL (after redirects) and its title, if it has one.
    public struct Found: Sendable, Equatable {
        public var url: URL
        public var title: String?
    }

    /// Seconds each request may take.
    public static let timeout = 20.0

    public let plugin: any SubscribableSource.Type
    public let http: LiveHTTPTransport

    public init(plugin: any SubscribableSource.Type, http: LiveHTTPTransport) {
        self.plugin = plugin
        self.http = http
    }

    /// The feed at `address`; of several a page advertises, the one `choose` picks.
    public func find(_ address: URL, choose: ([AdvertisedFeed], URL) throws -> AdvertisedFeed) async throws -> Found {
        let response = try await fetch(address)
        switch plugin.discover(response, json: JSONBody(environment: [:])) {
        case .feed(let title):
            return Found(url: response.url, title: title)
        case .neither(let reason):
            throw Failure.notAFeed(response.url, reason)
        case .page(let feeds):
            let chosen = try choose(feeds, response.url)
            let answer = try await fetch(chosen.url)
            guard case .feed(let title) = plugin.discover(answer, json: JSONBody(environment: [:])) else {
                throw Failure.advertisedIsNotAFeed(page: response.url, feed: chosen.url)
            }
            return Found(url: answer.url, title: title ?? chosen.title)
        }
    }

    private func fetch(_ url: URL) async throws(Failure) -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try await http.send(HTTPRequest(url: url, headers: ["accept": "application/atom+xml, application/rss+xml, application/feed+json, text/html;q=0.8, */*;q=0.5"]),
                                           timeout: Self.timeout)
        } catch let error as SourceError {
            throw .unreachable(url, error.description)
        } catch {
            throw .unreachable(url, "\(error)")
        }
        guard response.isSuccess else { throw .status(url, response.status) }
        return response
    }
}
