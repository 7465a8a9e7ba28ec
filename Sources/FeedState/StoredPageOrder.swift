import FeedCore
import Foundation

extension StoredPageQuery {
    /// This page made from `kept` as ``CardStore/cards(of:)`` gives them (each source's cards
    /// in feed order): the specification every store's indexed pages are tested against,
    /// the in-memory store's pages, and a store's own way for what its indexes cannot order
    /// exactly (a price finer than a millionth). It costs every kept card of the sources.
    ///
    /// Feed order takes one card of each source at a time, each source's list filtered by
    /// the marks first; by source, each source's list whole, the sources by id. By price,
    /// by date and by title, ties keep their place in the unfiltered feed order (a card's
    /// rank in its source, then its source's place): reading a card does not move the cards
    /// tied with it, and a page of the newest unread cards can be read from
    /// the date index alone. A card's date is when it was published, else when it was first
    /// seen: a deal or a product without one sorts among the posts of its day, not last.
    public func page(of kept: [KeptCard]) -> StoredPage {
        var lists: [String: [Ranked]] = [:]
        var ranks: [String: Int] = [:]
        for card in kept {
            let rank = ranks[card.card.source, default: 0]
            ranks[card.card.source] = rank + 1
            if reading?.includes(card.dates) ?? true { lists[card.card.source, default: []].append(Ranked(card: card, rank: rank, place: 0)) }
        }
        var seen = Set<String>()
        let unique = sources.filter { seen.insert($0).inserted }
        let ordered = unique.enumerated().map { place, source in
            (lists[source] ?? []).map { Ranked(card: $0.card, rank: $0.rank, place: place) }
        }
        var feed: [Ranked] = []
        feed.reserveCapacity(ordered.reduce(0) { $0 + $1.count })
        for round in 0..<(ordered.map(\.count).max() ?? 0) {
            for list in ordered where round < list.count { feed.append(list[round]) }
        }
        let sorted: [Ranked] = switch order {
        case .feed: descending ? feed.reversed() : feed
        case .price: Self.byKey(feed, descending: descending) { $0.card.card.price?.amount }
        case .published: Self.byKey(feed, descending: descending) { $0.card.card.published ?? $0.card.dates.firstSeen }
        case .title: Self.byKey(feed, descending: descending) { CardSortKeys.titleKey($0.card.card.title) }
        case .source: unique.sorted { descending ? $0 > $1 : $0 < $1 }.flatMap { lists[$0] ?? [] }
        }
        let start = min(offset, sorted.count)
        return StoredPage(cards: sorted[start...].prefix(max(limit, 0)).map(\.card), total: sorted.count)
    }

    /// A kept card with its rank in its source's whole list and its source's place.
    private struct Ranked {
        var card: KeptCard
        var rank: Int
        var place: Int
    }

    /// `feed` by `key` (cards without one last), the unfiltered feed order breaking ties
    /// either way.
    private static func byKey<Key: Comparable>(_ feed: [Ranked], descending: Bool, _ key: (Ranked) -> Key?) -> [Ranked] {
        let keyed = feed.map { (key: key($0), card: $0) }
        return keyed.sorted { a, b in
            switch (a.key, b.key) {
            case let (x?, y?) where x != y: return descending ? x > y : x < y
            case (nil, _?): return false
            case (_?, nil): return true
            default: return (a.card.rank, a.card.place) < (b.card.rank, b.card.place)
            }
        }.map(\.card)
    }
}
