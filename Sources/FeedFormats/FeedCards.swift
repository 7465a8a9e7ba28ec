import FeedCore
import Foundation

/// Cards in feed order, read in place from the per-source lists they were mapped into
/// (made from their bytes as they are read, where a list is packed: ``CardList``).
///
/// A page is a list of positions, not a second copy of its cards: a `Card` is 320 bytes
/// inline, and copying the 27,500 cards of an `--all` dump at scale 500 held 8.8 MB more
/// at the run's peak.
public struct FeedCards: RandomAccessCollection, Sendable, ExpressibleByArrayLiteral {
    private let lists: [CardList]
    private let positions: [CardPosition]?

    /// The cards of `lists` at `positions`, in that order.
    package init(lists: [CardList], positions: [CardPosition]) {
        self.lists = lists
        self.positions = positions
    }

    /// `cards` as they are.
    public init(_ cards: [Card]) {
        lists = [CardList(cards)]
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

    /// The id of the card at `index`, read without making the card.
    public func id(at index: Int) -> String {
        guard let positions else { return lists[0].id(at: index) }
        return lists.id(at: positions[index])
    }

    /// When the card at `index` was published, read without making the card.
    public func published(at index: Int) -> Date? {
        guard let positions else { return lists[0].published(at: index) }
        return lists.published(at: positions[index])
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

extension Array where Element == CardList {
    package subscript(position: CardPosition) -> Card {
        self[Int(position.list)][Int(position.index)]
    }

    package func id(at position: CardPosition) -> String {
        self[Int(position.list)].id(at: Int(position.index))
    }

    package func published(at position: CardPosition) -> Date? {
        self[Int(position.list)].published(at: Int(position.index))
    }

    package func priceAmount(at position: CardPosition) -> Decimal? {
        self[Int(position.list)].priceAmount(at: Int(position.index))
    }
}
