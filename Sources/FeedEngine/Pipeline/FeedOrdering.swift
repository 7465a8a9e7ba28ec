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

    /// How many distinct cards ``interleave(_:rounds:)`` would give, counting no further
    /// than `limit`: the lazy walk asks this after every fetch, and copying every card to
    /// learn that the first page is full would cost more than the page.
    static func uniqueCount(_ lists: [[Card]], rounds: Int? = nil, upTo limit: Int) -> Int {
        let rounds = rounds ?? (lists.map(\.count).max() ?? 0)
        var seen = Set<String>()
        for round in 0..<rounds {
            for list in lists where round < list.count {
                seen.insert(list[round].id)
                if seen.count >= limit { return seen.count }
            }
        }
        return seen.count
    }

    /// A stable sort of `cards` (already in feed order, which breaks ties). Cards
    /// without the key go last in either order. Sorts indices by keys worked out once,
    /// so no card is copied and no key is derived twice while sorting.
    static func sort(_ cards: [Card], by key: SortKey, order: SortDirection) -> [Card] {
        switch key {
        case .feed:
            return order == .ascending ? cards : cards.reversed()
        case .date:
            return stableSort(cards, order: order, keys: cards.map { $0.published })
        case .price:
            return stableSort(cards, order: order, keys: cards.map { $0.price.map(PriceKey.init) })
        case .title:
            return stableSort(cards, order: order, keys: cards.map {
                $0.title.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            })
        case .source:
            return stableSort(cards, order: order, keys: cards.map { $0.source })
        }
    }

    private static func stableSort<Key: Comparable>(_ cards: [Card], order: SortDirection, keys: [Key?]) -> [Card] {
        let ascending = order == .ascending
        let sorted = cards.indices.sorted { a, b in
            switch (keys[a], keys[b]) {
            case let (x?, y?) where x != y:
                return ascending ? x < y : x > y
            case (_?, nil):
                return true
            case (nil, _?):
                return false
            default:
                return a < b
            }
        }
        return sorted.map { cards[$0] }
    }
}

/// A price amount as a whole number of millionths when it is exactly that (every real
/// price is), so the sort's hot loop compares integers; other amounts compare as the
/// exact `Decimal`. Both stand for the exact value, so mixing them keeps the order exact.
struct PriceKey: Comparable {
    let micros: Int64?
    let exact: Decimal

    init(_ price: Price) {
        exact = price.amount
        let scaled = price.amount * 1_000_000
        let whole = NSDecimalNumber(decimal: scaled).int64Value
        micros = Decimal(whole) == scaled ? whole : nil
    }

    static func < (a: PriceKey, b: PriceKey) -> Bool {
        if let x = a.micros, let y = b.micros { return x < y }
        return a.exact < b.exact
    }

    static func == (a: PriceKey, b: PriceKey) -> Bool {
        if let x = a.micros, let y = b.micros { return x == y }
        return a.exact == b.exact
    }
}
