import FeedCore
import FeedFormats
import FeedState
import FeedSupport
import Foundation
import GoogleReaderModel
import ReaderPages

/// The Fever API's vocabulary, as its documentation (and Miniflux and FreshRSS, which
/// serve it) has it: feeds and groups named by positive integers, items by the card
/// store's numbers, and one JSON object per answer whose members are the arguments asked.
package enum Fever {
    /// Where apps reach it: the address people type (the router takes `/api/fever/` as
    /// the same path), and the PHP name the original server had.
    package static let paths = ["/api/fever", "/api/fever.php"]
    package static let apiVersion = 3
    /// Items per `items` answer (the documentation's page).
    package static let itemsPerAnswer = 50
    /// Every feed's icon: one neutral pixel (this server keeps no favicons).
    package static let favicon = Favicon(id: 1, data: "image/gif;base64,R0lGODlhAQABAIAAAObm5gAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==")
    /// The super group of every feed (`mark=group&id=0`); `-1`, the Sparks, holds none.
    package static let kindling = 0

    /// The Google Reader API's subscriptions and folders under integer ids: a source's id
    /// is a hash of its id, a group's of its folder's name, so an app's ids stay when the
    /// list is edited (a collision takes the next free number, in the order of the names).
    package struct Catalog: Sendable {
        package struct Subscription: Sendable {
            package let id: Int
            package let source: String
            package let subscription: GoogleReader.Subscription
        }

        package struct Folder: Sendable {
            package let id: Int
            package let title: String
            package let feedIDs: [Int]
        }

        package let feeds: [Subscription]
        package let groups: [Folder]
        private let feedIDs: [String: Int]

        /// `base`: where this server's pages are (a source that is not a feed is subscribed
        /// to as its served Atom feed there).
        package init(_ catalog: GoogleReader.Catalog, base: String) {
            let subscriptions = catalog.subscriptions(base: base)
            let sources = catalog.entries.map(\.source.id)
            let feedIDs = Self.ids(for: sources, kind: "feed")
            self.feedIDs = feedIDs
            feeds = zip(sources, subscriptions).map { source, subscription in
                Subscription(id: feedIDs[source] ?? 0, source: source, subscription: subscription)
            }
            var members: [String: [Int]] = [:]
            for feed in feeds {
                for label in Set(feed.subscription.categories.map(\.label)) { members[label, default: []].append(feed.id) }
            }
            let groupIDs = Self.ids(for: Array(members.keys), kind: "group")
            groups = members.keys.sorted().map { Folder(id: groupIDs[$0] ?? 0, title: $0, feedIDs: members[$0] ?? []) }
        }

        /// The feed id of `source`, nil when it is not subscribed.
        package func feedID(of source: String) -> Int? { feedIDs[source] }

        /// Every subscribed source.
        package var sources: [String] { feeds.map(\.source) }

        /// The sources of feed `id` (none when no feed has it).
        package func sources(ofFeed id: Int) -> [String] {
            feeds.filter { $0.id == id }.map(\.source)
        }

        /// The sources of group `id`: every one for the Kindling, none for an unknown group.
        package func sources(ofGroup id: Int) -> [String] {
            if id == Fever.kindling { return sources }
            let members = Set(groups.first { $0.id == id }?.feedIDs ?? [])
            return feeds.filter { members.contains($0.id) }.map(\.source)
        }

        /// The groups as Fever's `groups`.
        package var groupList: [Group] {
            groups.map { Group(id: $0.id, title: $0.title) }
        }

        /// Each group's feed ids as Fever's `feeds_groups`.
        package var feedsGroups: [FeedsGroup] {
            groups.map { FeedsGroup(groupId: $0.id, feedIds: $0.feedIDs.map(String.init).joined(separator: ",")) }
        }

        /// Stable positive 31-bit ids for `names` (apps may keep them in 32-bit integers).
        package static func ids(for names: [String], kind: String) -> [String: Int] {
            var taken = Set<Int>()
            var ids: [String: Int] = [:]
            for name in Set(names).sorted() {
                var id = Int(FNV1a.hash(Array("\(kind):\(name)".utf8)) & 0x7fff_ffff)
                while id == 0 || taken.contains(id) { id = id % 0x7fff_ffff + 1 }
                taken.insert(id)
                ids[name] = id
            }
            return ids
        }
    }

    /// One answer: `api_version` and `auth` always, `last_refreshed_on_time` once signed
    /// in, and the members of the arguments the request named (others absent).
    package struct Answer: Encodable, Sendable {
        package var apiVersion = Fever.apiVersion
        package var auth = 1
        package var lastRefreshedOnTime: Int64?
        package var groups: [Group]?
        package var feeds: [Feed]?
        package var feedsGroups: [FeedsGroup]?
        package var favicons: [Favicon]?
        package var items: [Item]?
        package var totalItems: Int?
        package var unreadItemIds: String?
        package var savedItemIds: String?
        package var links: [String]?

        package init(lastRefreshedOnTime: Int64) {
            self.lastRefreshedOnTime = lastRefreshedOnTime
        }

        /// The answer's JSON: snake-case members, as Fever names them.
        package var json: Data {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            encoder.keyEncodingStrategy = .convertToSnakeCase
            return (try? encoder.encode(self)) ?? Data(#"{"api_version":3,"auth":1}"#.utf8)
        }
    }

    package struct Group: Encodable, Sendable {
        package var id: Int
        package var title: String
    }

    package struct Feed: Encodable, Sendable {
        package var id: Int
        package var faviconId: Int
        package var title: String
        package var url: String
        package var siteUrl: String
        package var isSpark = 0
        package var lastUpdatedOnTime: Int64

        package init(id: Int, title: String, url: String, siteUrl: String, lastUpdatedOnTime: Int64) {
            self.id = id
            faviconId = Fever.favicon.id
            self.title = title
            self.url = url
            self.siteUrl = siteUrl
            self.lastUpdatedOnTime = lastUpdatedOnTime
        }
    }

    package struct FeedsGroup: Encodable, Sendable {
        package var groupId: Int
        /// Comma-separated, as the documentation has it.
        package var feedIds: String
    }

    package struct Favicon: Encodable, Sendable {
        package var id: Int
        package var data: String
    }

    /// One card as an item: its number is its id, its own link or its page here its `url`,
    /// its sanitized body its `html`.
    package struct Item: Encodable, Sendable {
        package var id: Int64
        package var feedId: Int
        package var title: String
        package var author: String
        package var html: String
        package var url: String
        package var isSaved: Int
        package var isRead: Int
        package var createdOnTime: Int64

        package init(_ kept: KeptCard, feedID: Int, pageBase: String) {
            let parts = EntryParts(kept.card, firstSeen: kept.dates.firstSeen)
            id = kept.dates.number
            feedId = feedID
            title = kept.card.title
            author = kept.card.author?.name ?? ""
            html = parts.html
            url = ReaderPage.appLink(parts.url, card: kept.card.id, pageBase: pageBase)
            isSaved = kept.dates.starredAt == nil ? 0 : 1
            isRead = kept.dates.readAt == nil ? 0 : 1
            createdOnTime = Int64(parts.date.timeIntervalSince1970)
        }
    }

    /// Item ids as the documentation lists them: comma-separated, no spaces.
    package static func list(_ numbers: [Int64]) -> String {
        numbers.map(String.init).joined(separator: ",")
    }

    /// The numbers of a comma-separated list (`with_ids`), the malformed left out.
    package static func numbers(_ text: String) -> [Int64] {
        text.split(separator: ",").compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.filter { $0 > 0 }
    }
}
