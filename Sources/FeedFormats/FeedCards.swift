import FeedCore

/// Cards in feed order, read in place from the per-source lists they were mapped into.
///
/// A page is a list of positions, not a second copy of its cards: a `Card` is 320 bytes
/// inline, and copying the 27,500 cards of an `--all` dump at scale 500 held 8.8 MB more
/// at the run's peak.
public struct FeedCards: RandomAccessCollection, Sendable, ExpressibleByArrayLiteral {
    private let lists: [[Card]]
    private let positions: [CardPosition]?

    /// The cards of `lists` at `positions`, in that order.
    package init(lists: [[Card]], positions: [CardPosition]) {
        self.lists = lists
        self.positions = positions
    }

    /// `cards` as they are.
    public init(_ cards: [Card]) {
        lists = [cards]
        positions = nil
    }

    public init(arrayLiteral cards: Card...) {
        self.init(cards)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { positions?.count ?? lists[0].count }

    public subscript(index: Int) -> Card {
        guard let positions else { return lists[0][index] }
        return lists[positions[index]]
    }
}

extension FeedCards: Equatable {
    public static func == (lhs: FeedCards, rhs: FeedCards) -> Bool {
        lhs.elementsEqual(rhs)
    }
}

/// Where a card is in the per-source lists of a run: merge, dedupe and sort move these
/// two integers instead of whole cards (a card is a dozen reference-counted fields, and
/// moving 13,750 of them four times was a fifth of a large run).
package struct CardPosition: Hashable, Sendable {
    package var list: Int32
    package var index: Int32

    package init(list: Int32, index: Int32) {
        self.list = list
        self.index = index
    }
}

extension Array where Element == [Card] {
    package subscript(position: CardPosition) -> Card {
        self[Int(position.list)][Int(position.index)]
    }
}
