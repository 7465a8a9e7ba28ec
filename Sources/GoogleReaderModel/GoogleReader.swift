import FeedConfig
import FeedCore
import FeedFormats
import FeedState
import Foundation
import ReaderPages

/// The Google Reader API's vocabulary, as the FeedHQ reference describes it: streams,
/// item ids in their two forms, and the JSON shapes apps read.
package enum GoogleReader {
    package static let prefix = "/api/greader"
    package static let readingList = "user/-/state/com.google/reading-list"
    package static let starred = "user/-/state/com.google/starred"
    package static let read = "user/-/state/com.google/read"
    package static let keptUnread = "user/-/state/com.google/kept-unread"
    package static let labelPrefix = "user/-/label/"
    package static let itemPrefix = "tag:google.com,2005:reader/item/"

    /// What a stream id names.
    package enum Stream: Equatable {
        case readingList, starred, read
        case feed(String)
        case label(String)

        /// `user/-/state/com.google/…` (any user in place of `-`), `feed/ID`, `user/-/label/NAME`.
        package init?(_ id: String) {
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
        package var filter: ReadingFilter? {
            switch self {
            case .starred: .starred
            case .read: .read
            case .readingList, .feed, .label: nil
            }
        }
    }

    /// A card's item id in the long form: the card's number as 16 hex digits.
    package static func longID(_ number: Int64) -> String {
        itemPrefix + String(format: "%016llx", UInt64(bitPattern: number))
    }

    /// The number of an item id in either form: `tag:google.com,2005:reader/item/<hex>`, or
    /// the short form, a decimal (some apps send the hex digits alone).
    package static func number(ofItem text: String) -> Int64? {
        if text.hasPrefix(itemPrefix) { return UInt64(text.dropFirst(itemPrefix.count), radix: 16).map { Int64(bitPattern: $0) } }
        if let decimal = Int64(text) { return decimal }
        if text.utf8.count == 16, let hex = UInt64(text, radix: 16) { return Int64(bitPattern: hex) }
        return nil
    }

    /// One source as an app subscribes to it: its own feed URL when it is a feed, else
    /// its served Atom feed; its folders as labels.
    package struct Subscription: Encodable, Sendable {
        package struct Category: Encodable, Sendable {
            package var id: String
            package var label: String

            package init(id: String, label: String) {
                self.id = id
                self.label = label
            }
        }

        package var id: String
        package var title: String
        package var categories: [Category]
        package var url: String
        package var htmlUrl: String
        package var iconUrl = ""
        package var sortid: String
        package var firstitemmsec = "0"

        package init(id: String, title: String, categories: [Category], url: String, htmlUrl: String, sortid: String) {
            self.id = id
            self.title = title
            self.categories = categories
            self.url = url
            self.htmlUrl = htmlUrl
            self.sortid = sortid
        }
    }

    /// The enabled sources as subscriptions, made once per configuration (a source's
    /// settings are built to find its feed URL and folders: for 500 sources, most of an
    /// unread-count's time when made per request).
    package struct Catalog: Sendable {
        package struct Entry: Sendable {
            package let source: SourceConfig
            /// The source's own feed URL (secrets redacted), nil when it is not a feed.
            package let feedURL: String?
            package let subscription: Subscription

            package init(source: SourceConfig, feedURL: String?, subscription: Subscription) {
                self.source = source
                self.feedURL = feedURL
                self.subscription = subscription
            }
        }

        package let entries: [Entry]
        package let byID: [String: Entry]

        package init(_ config: FeedConfig, registry: SourceRegistry) {
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
        package func subscriptions(base: String) -> [Subscription] {
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
    package struct Item: Encodable {
        package struct Link: Encodable {
            package var href: String
            package var type: String?

            package init(href: String, type: String? = nil) {
                self.href = href
                self.type = type
            }
        }

        /// A file of the item (a podcast's episode): what podcast apps and newsboat's
        /// FreshRSS mode download, with the keys the asking app reads (``EnclosureKeys``).
        package struct Enclosure: Encodable {
            package var href: String
            package var type: String?
            package var length: Int?
            package var keys: EnclosureKeys

            private enum Key: String, CodingKey { case href, url, type, length }

            package func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                switch keys {
                case .freshRSS:
                    try container.encode(href, forKey: .href)
                    try container.encodeIfPresent(type, forKey: .type)
                    try container.encodeIfPresent(length, forKey: .length)
                case .miniflux:
                    try container.encode(href, forKey: .url)
                    try container.encode(type ?? "", forKey: .type)
                }
            }
        }

        package struct Content: Encodable {
            package var direction = "ltr"
            package var content: String

            package init(content: String) {
                self.content = content
            }
        }

        package struct Origin: Encodable {
            package var streamId: String
            package var title: String
            package var htmlUrl: String

            package init(streamId: String, title: String, htmlUrl: String) {
                self.streamId = streamId
                self.title = title
                self.htmlUrl = htmlUrl
            }
        }

        package var id: String
        package var crawlTimeMsec: String
        package var timestampUsec: String
        package var published: Int64
        package var updated: Int64
        package var title: String
        package var canonical: [Link]
        package var alternate: [Link]
        package var summary: Content
        package var author: String?
        package var categories: [String]
        package var origin: Origin
        /// Left out when the card has none.
        package var enclosure: [Enclosure]?

        /// `style.pageBase`: where this server's pages are; a card without a link of its
        /// own links to its page here (apps index `canonical[0]` unguarded).
        package init(_ card: Card, dates: KeptDates, source: SourceConfig?, labels: [String], style: ItemStyle) {
            let pageBase = style.pageBase
            let parts = EntryParts(card, firstSeen: dates.firstSeen)
            id = GoogleReader.longID(dates.number)
            crawlTimeMsec = String(Int64(dates.firstSeen.timeIntervalSince1970 * 1000))
            timestampUsec = String(Int64(parts.date.timeIntervalSince1970 * 1_000_000))
            published = Int64(parts.date.timeIntervalSince1970)
            updated = published
            title = card.title
            let link = ReaderPage.appLink(parts.url, card: card.id, pageBase: pageBase)
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
            let files = parts.enclosures.map {
                Enclosure(href: $0.url.absoluteString, type: $0.type, length: $0.length > 0 ? Int($0.length) : nil, keys: style.enclosureKeys)
            }
            enclosure = files.isEmpty ? nil : files
        }
    }

    /// The keys of an item's `enclosure` objects. FreshRSS gives `{"href", "type",
    /// "length"}`, which newsboat's FreshRSS mode and the apps written for FreshRSS read;
    /// Miniflux gives `{"url", "type"}`, and the PyPI `google-reader` client, written for
    /// it, takes an enclosure of exactly those two keys and fails on any other. No request
    /// says which it reads but that client's User-Agent, so FreshRSS's is the rule and
    /// Miniflux's that client's.
    package enum EnclosureKeys: Sendable {
        case freshRSS, miniflux

        package init(userAgent: String?) {
            self = userAgent?.hasPrefix("Google Reader Python Client") == true ? .miniflux : .freshRSS
        }
    }

    /// How one request's items are written: where this server's pages are, and the
    /// enclosure keys its app reads.
    package struct ItemStyle: Sendable {
        package var pageBase: String
        package var enclosureKeys: EnclosureKeys

        package init(pageBase: String, enclosureKeys: EnclosureKeys = .freshRSS) {
            self.pageBase = pageBase
            self.enclosureKeys = enclosureKeys
        }
    }

    package struct Contents: Encodable {
        package var id: String
        package var title: String
        package var updated: Int64
        package var items: [Item]
        package var continuation: String?

        package init(id: String, title: String, updated: Int64, items: [Item], continuation: String? = nil) {
            self.id = id
            self.title = title
            self.updated = updated
            self.items = items
            self.continuation = continuation
        }
    }

    package struct ItemRef: Encodable {
        package var id: String
        package var directStreamIds: [String] = []
        package var timestampUsec: String

        package init(id: String, directStreamIds: [String] = [], timestampUsec: String) {
            self.id = id
            self.directStreamIds = directStreamIds
            self.timestampUsec = timestampUsec
        }
    }

    package struct ItemRefs: Encodable {
        package var itemRefs: [ItemRef]
        package var continuation: String?

        package init(itemRefs: [ItemRef], continuation: String? = nil) {
            self.itemRefs = itemRefs
            self.continuation = continuation
        }
    }

    package struct UnreadCount: Encodable {
        package var id: String
        package var count: Int
        package var newestItemTimestampUsec = "0"

        package init(id: String, count: Int) {
            self.id = id
            self.count = count
        }
    }

    package struct UnreadCounts: Encodable {
        package var max = 1000
        package var unreadcounts: [UnreadCount]

        package init(unreadcounts: [UnreadCount]) {
            self.unreadcounts = unreadcounts
        }
    }

    package struct Tag: Encodable {
        package var id: String
        package var type: String?

        package init(id: String, type: String? = nil) {
            self.id = id
            self.type = type
        }
    }

    package struct UserInfo: Encodable {
        package var userId: String
        package var userName: String
        package var userProfileId: String
        package var userEmail: String

        package init(userId: String, userName: String, userProfileId: String, userEmail: String) {
            self.userId = userId
            self.userName = userName
            self.userProfileId = userProfileId
            self.userEmail = userEmail
        }
    }
}
