import ServeAccess
import ServeHTTP
import FeedConfig
import FeedCore
import FeedFormats
import FeedState
import Foundation
import ReaderPages

/// The Google Reader API's vocabulary, as the FeedHQ reference describes it: streams,
/// item ids in their two forms, and the JSON shapes apps read.
enum GoogleReader {
    static let prefix = "/api/greader"
    static let readingList = "user/-/state/com.google/reading-list"
    static let starred = "user/-/state/com.google/starred"
    static let read = "user/-/state/com.google/read"
    static let keptUnread = "user/-/state/com.google/kept-unread"
    static let labelPrefix = "user/-/label/"
    static let itemPrefix = "tag:google.com,2005:reader/item/"

    /// What a stream id names.
    enum Stream: Equatable {
        case readingList, starred, read
        case feed(String)
        case label(String)

        /// `user/-/state/com.google/…` (any user in place of `-`), `feed/ID`, `user/-/label/NAME`.
        init?(_ id: String) {
            if id.hasPrefix("feed/") {
                self = .feed(String(id.dropFirst(5)))
                return
            }
            let parts = id.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "user" else { return nil }
            switch parts[2] {
            case "state/com.google/reading-list": self = .readingList
            case "state/com.google/starred": self = .starred
            case "state/com.google/read": self = .read
            default:
                guard parts[2].hasPrefix("label/"), parts[2].count > 6 else { return nil }
                self = .label(String(parts[2].dropFirst(6)))
            }
        }

        /// The marks a stream of cards keeps (nil: every card).
        var filter: ReadingFilter? {
            switch self {
            case .starred: .starred
            case .read: .read
            case .readingList, .feed, .label: nil
            }
        }
    }

    /// A card's item id in the long form: the card's number as 16 hex digits.
    static func longID(_ number: Int64) -> String {
        itemPrefix + String(format: "%016llx", UInt64(bitPattern: number))
    }

    /// The number of an item id in either form: `tag:google.com,2005:reader/item/<hex>`, or
    /// the short form, a decimal (some apps send the hex digits alone).
    static func number(ofItem text: String) -> Int64? {
        if text.hasPrefix(itemPrefix) { return UInt64(text.dropFirst(itemPrefix.count), radix: 16).map { Int64(bitPattern: $0) } }
        if let decimal = Int64(text) { return decimal }
        if text.utf8.count == 16, let hex = UInt64(text, radix: 16) { return Int64(bitPattern: hex) }
        return nil
    }

    /// One source as an app subscribes to it: its own feed URL when it is a feed, else
    /// its served Atom feed; its folders as labels.
    struct Subscription: Encodable, Sendable {
        struct Category: Encodable, Sendable {
            var id: String
            var label: String
        }

        var id: String
        var title: String
        var categories: [Category]
        var url: String
        var htmlUrl: String
        var iconUrl = ""
        var sortid: String
        var firstitemmsec = "0"
    }

    /// The enabled sources as subscriptions, made once per configuration (a source's
    /// settings are built to find its feed URL and folders: for 500 sources, most of an
    /// unread-count's time when made per request).
    struct Catalog: Sendable {
        struct Entry: Sendable {
            let source: SourceConfig
            /// The source's own feed URL (secrets redacted), nil when it is not a feed.
            let feedURL: String?
            let subscription: Subscription
        }

        let entries: [Entry]
        let byID: [String: Entry]

        init(_ config: FeedConfig, registry: SourceRegistry) {
            entries = config.sources.filter(\.enabled).enumerated().map { index, source in
                var url: String?
                var folders: [String] = []
                if let feed = registry.type(for: source.plugin) as? any SubscribableSource.Type {
                    let subscription = feed.subscription(source.settings)
                    url = subscription.url.redactedString
                    folders = subscription.folders
                }
                return Entry(source: source, feedURL: url, subscription: Subscription(
                    id: "feed/" + source.id, title: source.displayName,
                    categories: folders.map { Subscription.Category(id: labelPrefix + $0, label: $0) },
                    url: url ?? "", htmlUrl: url ?? "", sortid: String(format: "%08X", index)))
            }
            byID = Dictionary(entries.map { ($0.source.id, $0) }, uniquingKeysWith: { first, _ in first })
        }

        /// The subscriptions, a source that is not a feed by its served Atom feed at `base`.
        func subscriptions(base: String) -> [Subscription] {
            entries.map { entry in
                guard entry.feedURL == nil else { return entry.subscription }
                var subscription = entry.subscription
                let id = entry.source.id.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? entry.source.id
                subscription.url = "\(base)/feed.atom?source=\(id)"
                subscription.htmlUrl = subscription.url
                return subscription
            }
        }
    }

    /// One card as an item.
    struct Item: Encodable {
        struct Link: Encodable {
            var href: String
            var type: String?
        }

        struct Content: Encodable {
            var direction = "ltr"
            var content: String
        }

        struct Origin: Encodable {
            var streamId: String
            var title: String
            var htmlUrl: String
        }

        var id: String
        var crawlTimeMsec: String
        var timestampUsec: String
        var published: Int64
        var updated: Int64
        var title: String
        var canonical: [Link]
        var alternate: [Link]
        var summary: Content
        var author: String?
        var categories: [String]
        var origin: Origin

        /// `pageBase`: where this server's pages are; a card without a link of its own
        /// links to its page here (apps index `canonical[0]` unguarded).
        init(_ card: Card, dates: KeptDates, source: SourceConfig?, labels: [String], pageBase: String) {
            let parts = EntryParts(card, firstSeen: dates.firstSeen)
            id = GoogleReader.longID(CardNumber.of(card.id))
            crawlTimeMsec = String(Int64(dates.firstSeen.timeIntervalSince1970 * 1000))
            timestampUsec = String(Int64(parts.date.timeIntervalSince1970 * 1_000_000))
            published = Int64(parts.date.timeIntervalSince1970)
            updated = published
            title = card.title
            let link = parts.url?.absoluteString ?? pageBase + ReaderPage.cardPath(card.id)
            let links = [Link(href: link, type: "text/html")]
            canonical = links.map { Link(href: $0.href) }
            alternate = links
            summary = Content(content: parts.html)
            author = card.author?.name
            categories = [GoogleReader.readingList]
                + (dates.readAt != nil ? [GoogleReader.read] : [])
                + (dates.starredAt != nil ? [GoogleReader.starred] : [])
                + labels.map { GoogleReader.labelPrefix + $0 } + card.tags
            origin = Origin(streamId: "feed/" + card.source, title: source?.displayName ?? card.source, htmlUrl: "")
        }
    }

    struct Contents: Encodable {
        var id: String
        var title: String
        var updated: Int64
        var items: [Item]
        var continuation: String?
    }

    struct ItemRef: Encodable {
        var id: String
        var directStreamIds: [String] = []
        var timestampUsec: String
    }

    struct ItemRefs: Encodable {
        var itemRefs: [ItemRef]
        var continuation: String?
    }

    struct UnreadCount: Encodable {
        var id: String
        var count: Int
        var newestItemTimestampUsec = "0"
    }

    struct UnreadCounts: Encodable {
        var max = 1000
        var unreadcounts: [UnreadCount]
    }

    struct Tag: Encodable {
        var id: String
        var type: String?
    }

    struct UserInfo: Encodable {
        var userId: String
        var userName: String
        var userProfileId: String
        var userEmail: String
    }
}
