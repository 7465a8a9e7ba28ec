import FeedCore
import Foundation

/// The pure steps of the pipeline: interleave, dedupe, sort.
enum FeedOrdering {
    /// Round-robin over `lists` (one per source, config order): the first card of each,
    /// then the second of each, and so on; a list that runs out is skipped.
    /// With `rounds`, stops after that many rounds.
    static func interleave(_ lists: [[Card]], rounds: Int? = nil) -> [Card] {
        let limit = rounds ?? (lists.map(\.count).max() ?? 0)
        var merged: [Card] = []
        merged.reserveCapacity(lists.reduce(0) { $0 + min($1.count, limit) })
        for round in 0..<limit {
            for list in lists where round < list.count {
                merged.append(list[round])
            }
        }
        return merged
    }

    /// Drops every card whose id was already seen; the first one wins.
    static func dedupe(_ cards: [Card]) -> (cards: [Card], dropped: Int) {
        var seen = Set<String>()
        let unique = cards.filter { seen.insert($0.id).inserted }
        return (unique, cards.count - unique.count)
    }

    /// A stable sort of `cards` (already in feed order, which breaks ties). Cards
    /// without the key go last in either order.
    static func sort(_ cards: [Card], by key: SortKey, order: SortDirection) -> [Card] {
        switch key {
        case .feed:
            return order == .ascending ? cards : cards.reversed()
        case .date:
            return stableSort(cards, order: order) { $0.published }
        case .price:
            return stableSort(cards, order: order) { $0.price?.amount }
        case .title:
            return stableSort(cards, order: order) {
                $0.title.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            }
        case .source:
            return stableSort(cards, order: order) { $0.source }
        }
    }

    private static func stableSort<Key: Comparable>(
        _ cards: [Card], order: SortDirection, key: (Card) -> Key?
    ) -> [Card] {
        let keyed = cards.enumerated().map { (offset: $0.offset, key: key($0.element), card: $0.element) }
        return keyed.sorted { a, b in
            switch (a.key, b.key) {
            case let (x?, y?) where x != y:
                return order == .ascending ? x < y : x > y
            case (_?, nil):
                return true
            case (nil, _?):
                return false
            default:
                return a.offset < b.offset
            }
        }.map(\.card)
    }
}
