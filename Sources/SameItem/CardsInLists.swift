import FeedCore

/// Cards kept in several lists (a run's, one per source), read in a given order without
/// copying them out: what ``ItemMatcher`` and ``ItemMerge`` read a merged feed through.
/// Copying 25,000 cards into one array was a tenth of merging them.
public struct CardsInLists: RandomAccessCollection, Sendable {
    public let lists: [[Card]]
    /// Where each card of the order is: its list, and its place in the list.
    public let order: [(list: Int32, index: Int32)]

    public init(lists: [[Card]], order: [(list: Int32, index: Int32)]) {
        self.lists = lists
        self.order = order
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { order.count }

    public subscript(index: Int) -> Card {
        _read { yield lists[Int(order[index].list)][Int(order[index].index)] }
    }

    /// `body` of where the card at `index` lies, to read its fields in place: through the
    /// subscript each card the matcher read was copied whole, each of its fields retained
    /// and released.
    func withCard<Result>(at index: Int, _ body: (UnsafePointer<Card>) -> Result) -> Result {
        let (list, place) = order[index]
        // A list holding a card of the order has storage.
        return lists[Int(list)].withUnsafeBufferPointer { body($0.baseAddress! + Int(place)) }
    }
}
