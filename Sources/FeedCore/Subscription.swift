import Foundation

/// A source that is itself a feed a reader can subscribe to (`plugin: feed`): OPML exports
/// list it by its own URL, in folders of its choosing, instead of by the served feed, and
/// `aggregate add URL` asks it what a URL is.
public protocol SubscribableSource: FeedSource {
    /// The feed URL and the folders (outermost first) of a source with these settings.
    static func subscription(_ settings: SourceSettings) -> (url: URL, folders: [String])

    /// What `response` (the answer to a URL someone wants to subscribe to) is: a feed this
    /// plugin reads, a web page that advertises feeds, or neither. Must not do I/O.
    static func discover(_ response: HTTPResponse, json: any JSONBodyReader) -> FeedDiscovery
}

/// What a URL answered, to someone who wants to subscribe to it.
public enum FeedDiscovery: Sendable, Hashable {
    /// A feed, with its own title when it has one.
    case feed(title: String?)
    /// A web page that advertises these feeds (`<link rel="alternate">`), in its order;
    /// never empty.
    case page([AdvertisedFeed])
    /// Neither: why, in words for the person who asked (“the page names no feed”).
    case neither(String)
}

/// A feed a web page advertises: its address (http or https, resolved against the page)
/// and the title the page gives it.
public struct AdvertisedFeed: Sendable, Hashable {
    public var url: URL
    public var title: String?

    public init(url: URL, title: String? = nil) {
        self.url = url
        self.title = title
    }
}

/// A source that makes cards of any web page with no options, from what the page says of
/// itself (`plugin: html` and its structured data): `aggregate add URL` offers it for a
/// page that advertises no feed.
public protocol PageSource: FeedSource {}
