import Foundation

/// One item of the merged feed, whatever source it came from: the output contract.
///
/// Every line of `--format jsonl` is one `Card` encoded with sorted keys. The field
/// names are documented in docs/cards.md and versioned by ``Card/schemaVersion``.
public struct Card: Sendable, Hashable {
    /// The version of the card format, written as `"v"` on every JSONL line.
    public static let schemaVersion = 1

    /// What sort of thing a card describes.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case deal, product, post, person, item
    }

    /// Where a card came from when the live upstream could not serve it.
    public enum Origin: String, Sendable, Hashable, Codable {
        /// The last good response stored in the local cache.
        case cache
        /// The recorded response shipped inside the binary.
        case snapshot
    }

    /// Who made or owns the item (an LTK creator, a reqres user).
    public struct Author: Sendable, Hashable, Codable {
        public var name: String
        public var image: URL?
        public var url: URL?

        public init(name: String, image: URL? = nil, url: URL? = nil) {
            self.name = name
            self.image = image
            self.url = url
        }
    }

    /// `"<source id>:<upstream id>"`, stable across runs; the key for dedupe and digests.
    public var id: String
    /// The source id from Sources.yml.
    public var source: String
    public var kind: Kind
    /// Never empty.
    public var title: String
    public var summary: String?
    public var price: Price?
    public var image: URL?
    public var url: URL?
    public var author: Author?
    public var published: Date?
    public var tags: [String]
    /// Source-specific extras (description, specs, gallery, joined records).
    public var details: [String: JSONValue]
    /// Set only on cards served from a fallback tier; live cards leave it `nil`.
    public var origin: Origin?
    /// With `merge: same-item`: the same item at other sources (nil when not merged).
    public var also: [Copy]?
    /// With `merge: same-item`: every copy's price, this card's own included (nil when
    /// none has one); ``price`` is then the lowest of those in its currency.
    public var offers: [Copy]?

    /// One source's copy of an item that several sources carry.
    public struct Copy: Sendable, Hashable, Codable {
        public var source: String
        public var id: String
        public var url: URL?
        public var price: Price?

        public init(source: String, id: String, url: URL? = nil, price: Price? = nil) {
            self.source = source
            self.id = id
            self.url = url
            self.price = price
        }
    }

    /// Creates a card whose id is `"<source>:<upstreamID>"`.
    public init(
        source: String, upstreamID: String, kind: Kind, title: String,
        summary: String? = nil, price: Price? = nil, image: URL? = nil, url: URL? = nil,
        author: Author? = nil, published: Date? = nil, tags: [String] = [],
        details: [String: JSONValue] = [:], origin: Origin? = nil
    ) {
        self.id = "\(source):\(upstreamID)"
        self.source = source
        self.kind = kind
        self.title = title
        self.summary = summary
        self.price = price
        self.image = image
        self.url = url
        self.author = author
        self.published = published
        self.tags = tags
        self.details = details
        self.origin = origin
    }

    /// The part of ``id`` after the source id.
    public var upstreamID: String {
        String(id.dropFirst(source.count + 1))
    }
}
