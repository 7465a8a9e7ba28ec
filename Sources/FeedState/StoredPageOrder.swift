import FeedCore
import Foundation

extension StoredPageQuery {
    /// This page made from `kept` as ``CardStore/cards(of:)`` gives them (each source's cards
    /// in feed order): the specification every store's indexed pages are tested against,
    /// the in-memory store's pages, and a store's own way for what its indexes cannot order
    /// exactly (a price finer than a millionth). It costs every kept card of the sources.
    public func page(of kept: [KeptCard]) -> StoredPage {
        var lists: [String: [KeptCard]] = [:]
        for card in kept where reading?.includes(card.dates) ?? true {
            lists[card.card.source, default: []].append(card)
        }
        var seen = Set<String>()
        let ordered = sources.filter { seen.insert($0).inserted }.map { lists[$0] ?? [] }
        // Feed order: one card of each source at a time, in the query's order of sources.
        var feed: [KeptCard] = []
        feed.reserveCapacity(ordered.reduce(0) { $0 + $1.count })
        for round in 0..<(ordered.map(\.count).max() ?? 0) {
            for list in ordered where round < list.count { feed.append(list[round]) }
        }
        let sorted: [KeptCard] = switch order {
        case .feed: descending ? feed.reversed() : feed
        case .price: Self.byKey(feed, descending: descending) { $0.card.price?.amount }
        case .published: Self.byKey(feed, descending: descending) { $0.card.published }
        }
        let start = min(offset, sorted.count)
        return StoredPage(cards: Array(sorted[start...].prefix(max(limit, 0))), total: sorted.count)
    }

    /// `feed` by `key` (cards without one last), feed order breaking ties either way.
    private static func byKey<Key: Comparable>(_ feed: [KeptCard], descending: Bool, _ key: (KeptCard) -> Key?) -> [KeptCard] {
        let keyed = feed.enumerated().map { (place: $0.offset, key: key($0.element), card: $0.element) }
        return keyed.sorted { a, b in
            switch (a.key, b.key) {
            case let (x?, y?) where x != y: return descending ? x > y : x < y
            case (nil, _?): return false
            case (_?, nil): return true
            default: return a.place < b.place
            }
        }.map(\.card)
    }
}
