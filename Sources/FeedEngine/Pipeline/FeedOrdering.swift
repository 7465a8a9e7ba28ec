import FeedCore
import FeedState
import FeedFormats
import Foundation
import SameItem

/// The pure steps of the pipeline: interleave, dedupe, sort.
enum FeedOrdering {
    /// Round-robin over lists of `counts` cards (one per source, config order): the first
    /// card of each, then the second of each, and so on; a list that runs out is skipped.
    /// With `rounds`, stops after that many rounds.
    static func interleave(_ counts: [Int], rounds: Int? = nil) -> [CardPosition] {
        let limit = rounds ?? (counts.max() ?? 0)
        var merged: [CardPosition] = []
        merged.reserveCapacity(counts.reduce(0) { $0 + min($1, limit) })
        for round in 0..<limit {
            for (list, count) in counts.enumerated() where round < count {
                merged.append(CardPosition(list: Int32(list), index: Int32(round)))
            }
        }
        return merged
    }

    /// Drops every card whose id was already seen; the first one wins.
    ///
    /// Found by sorting the ids' hashes, not by a set of the ids: cards with equal hashes sit
    /// together after the sort, in feed order, and only they are compared by id. That holds
    /// 9 bytes a card where a `Set<String>` held 40 (at 50,000 cards the set was 1.8 MiB of
    /// the run's peak memory, docs/performance.md), in about the same time.
    static func dedupe(_ positions: consuming [CardPosition], in lists: [CardList]) -> (positions: [CardPosition], dropped: Int) {
        var positions = positions
        let hashes = positions.map { UInt32(truncatingIfNeeded: lists.id(at: $0).hashValue) }
        var byHash = Array(0..<UInt32(positions.count))
        byHash.sort { a, b in hashes[Int(a)] != hashes[Int(b)] ? hashes[Int(a)] < hashes[Int(b)] : a < b }
        var isCopy = [Bool](repeating: false, count: positions.count)
        var start = 0
        while start < byHash.count {
            var end = start + 1
            while end < byHash.count, hashes[Int(byHash[end])] == hashes[Int(byHash[start])] { end += 1 }
            if end - start > 1 {
                var seen = Set<String>()
                for index in byHash[start..<end].map(Int.init) where !seen.insert(lists.id(at: positions[index])).inserted {
                    isCopy[index] = true
                }
            }
            start = end
        }
        var kept = 0
        for index in positions.indices where !isCopy[index] {
            positions[kept] = positions[index]
            kept += 1
        }
        let dropped = positions.count - kept
        positions.removeLast(dropped)
        return (positions, dropped)
    }

    /// One position per item (`merge: same-item`): an item's first card in feed order stands
    /// for it, made into the card that lists its copies (``ItemMerge``), kept in a list of
    /// its own after the sources'; its other cards are left out. Reads the cards as values
    /// (a run that merges does not pack them).
    static func mergeItems(_ positions: [CardPosition], in lists: [CardList], decisions: ItemDecisions) -> (lists: [CardList], positions: [CardPosition]) {
        let cards = CardsInLists(lists: lists.map(\.values), order: positions.map { ($0.list, $0.index) })
        let items = ItemMatcher(decisions: decisions).items(cards)
        guard !items.isEmpty else { return (lists, positions) }
        let (shown, copies) = ItemMerge.shownCards(items, of: cards)
        let list = Int32(lists.count)
        var merged: [Card] = []
        let kept = positions.indices.filter { !copies.contains($0) }.map { index in
            guard let card = shown[index] else { return positions[index] }
            merged.append(card)
            return CardPosition(list: list, index: Int32(merged.count - 1))
        }
        return (lists + [CardList(merged)], kept)
    }

    /// How many distinct cards ``interleave(_:rounds:)`` would give, counting no further
    /// than `limit`: the lazy walk asks this after every fetch, and merging every card to
    /// learn that the first page is full would cost more than the page.
    static func uniqueCount(_ lists: [CardList], rounds: Int? = nil, upTo limit: Int) -> Int {
        let rounds = rounds ?? (lists.map(\.count).max() ?? 0)
        var seen = Set<String>()
        for round in 0..<rounds {
            for list in lists where round < list.count {
                seen.insert(list.id(at: round))
                if seen.count >= limit { return seen.count }
            }
        }
        return seen.count
    }

    /// A stable sort of `positions` (already in feed order, which breaks ties). Cards
    /// without the key go last in either order. Keys are worked out once per card.
    static func sort(_ positions: [CardPosition], in lists: [CardList], by key: SortKey, order: SortDirection) -> [CardPosition] {
        func keys<Key>(_ key: (Card) -> Key) -> [Key] { positions.map { key(lists[$0]) } }
        switch key {
        case .feed:
            return order == .ascending ? positions : positions.reversed()
        case .date:
            return stableSort(positions, order: order, keys: positions.map { lists.published(at: $0) })
        case .price:
            let prices = positions.map { lists.priceAmount(at: $0) }
            if let micros = PriceMicros.all(prices) { return stableSort(positions, order: order, keys: micros) }
            return stableSort(positions, order: order, keys: prices)
        case .title:
            return stableSort(positions, order: order, keys: keys { CardSortKeys.titleKey($0.title) })
        case .source:
            return stableSort(positions, order: order, keys: keys { $0.source })
        }
    }

    private static func stableSort<Key: Comparable>(_ positions: [CardPosition], order: SortDirection, keys: [Key?]) -> [CardPosition] {
        let ascending = order == .ascending
        let sorted = keys.indices.sorted { a, b in
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
        return sorted.map { positions[$0] }
    }
}

extension Array where Element == CardList {
    /// The cards at `positions`, in that order: the one copy of each card a run makes.
    func cards(at positions: some Collection<CardPosition>) -> [Card] {
        var cards: [Card] = []
        cards.reserveCapacity(positions.count)
        for position in positions { cards.append(self[position]) }
        return cards
    }
}
