import FeedCore
import SameItem

/// How cards are ordered.
public enum SortKey: String, Sendable, CaseIterable {
    /// Sources interleaved round-robin in config order, each in its upstream order.
    case feed
    /// By `published`; newest first unless `--order asc`.
    case date
    /// By `price.amount` (amounts compared as numbers, whatever the currency).
    case price
    /// By title, ignoring case and diacritics.
    case title
    /// By source id, alphabetically; each source's cards keep their feed order.
    case source

    /// The order used when `--order` is not given.
    public var defaultOrder: SortDirection { self == .date ? .descending : .ascending }
}

public enum SortDirection: String, Sendable, CaseIterable {
    case ascending = "asc"
    case descending = "desc"
}

/// What one run of the feed asks for.
public struct FeedQuery: Sendable {
    /// Source ids to run; empty = every enabled source.
    public var sourceIDs: [String]
    public var sort: SortKey
    /// `nil` = the sort key's default order.
    public var order: SortDirection?
    /// 1-based.
    public var page: Int
    public var perPage: Int
    public var kind: Card.Kind?
    /// Case- and diacritic-insensitive text that title or summary must contain.
    public var text: String?
    /// `merge: same-item` or `--merge`: one card per item across sources, people's
    /// decisions beating the rules (nil: every card its own).
    public var merge: ItemDecisions?

    public static let maxPerPage = 1000
    /// `--all`: one page larger than any run can fill (budgets cap a source at 1e6 cards),
    /// yet small enough that page arithmetic never nears overflow.
    public static let everyCard = Int(Int32.max)
    /// The largest page number the CLI accepts.
    public static let maxPage = 1_000_000

    public init(sourceIDs: [String] = [], sort: SortKey = .feed, order: SortDirection? = nil, page: Int = 1,
                perPage: Int = 20, kind: Card.Kind? = nil, text: String? = nil) {
        self.sourceIDs = sourceIDs
        self.sort = sort
        self.order = order
        self.page = page
        self.perPage = perPage
        self.kind = kind
        self.text = text
    }

    /// Whether `card` passes the `--kind` and `--query` filters.
    public func matches(_ card: Card) -> Bool {
        if let kind, card.kind != kind { return false }
        if let text, !text.isEmpty {
            let options: String.CompareOptions = [.caseInsensitive, .diacriticInsensitive]
            return card.title.range(of: text, options: options) != nil
                || card.summary?.range(of: text, options: options) != nil
        }
        return true
    }

    /// Whether `--kind` or `--query` leaves cards out.
    public var filters: Bool { kind != nil || !(text ?? "").isEmpty }

    var effectiveOrder: SortDirection { order ?? sort.defaultOrder }

    /// Whether the requested page can be known before every source is read to the end.
    /// (Not when merging: which cards are one item is known once every card is.)
    var isLazy: Bool { sort == .feed && effectiveOrder == .ascending && merge == nil }
}
