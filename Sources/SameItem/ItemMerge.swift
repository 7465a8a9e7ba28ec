import FeedCore
import Foundation

/// One card per item: the item's first card (first seen, else first in the feed) with
/// `also` listing every other copy, `offers` every copy's price, and its price the lowest
/// of those in its own currency. Prices in other currencies are listed, never converted or
/// compared.
public enum ItemMerge {
    /// `cards` with one card per item (``card(_:of:)``) where its first card was, its other
    /// cards left out.
    public static func merged(_ cards: [Card], decisions: ItemDecisions) -> [Card] {
        let items = ItemMatcher(decisions: decisions).items(cards)
        guard !items.isEmpty else { return cards }
        let (shown, copies) = shownCards(items, of: cards)
        return cards.indices.filter { !copies.contains($0) }.map { shown[$0] ?? cards[$0] }
    }

    /// For each item, the card it shows by the index of its first card, and the indices of
    /// the copies it absorbs (left out wherever the cards are listed).
    public static func shownCards(_ items: [ItemMatcher.Item], of cards: [Card]) -> (shown: [Int: Card], copies: Set<Int>) {
        shown(items, of: cards)
    }

    /// ``shownCards(_:of:)`` of cards kept in several lists.
    public static func shownCards(_ items: [ItemMatcher.Item], of cards: CardsInLists) -> (shown: [Int: Card], copies: Set<Int>) {
        shown(items, of: cards)
    }

    private static func shown<Cards: RandomAccessCollection>(_ items: [ItemMatcher.Item], of cards: Cards)
        -> (shown: [Int: Card], copies: Set<Int>) where Cards.Element == Card, Cards.Index == Int {
        var shown: [Int: Card] = [:]
        var copies = Set<Int>()
        for item in items {
            shown[item.members[0]] = card(item, of: cards)
            copies.formUnion(item.members.dropFirst())
        }
        return (shown, copies)
    }

    /// The source whose offer is the card's price, when another source's copy is cheapest.
    public static func cheapestElsewhere(_ card: Card) -> String? {
        guard let price = card.price, let offer = card.offers?.first(where: { $0.price == price }), offer.source != card.source else { return nil }
        return offer.source
    }

    /// The card `item` shows, made of `cards`.
    public static func card<Cards: RandomAccessCollection>(_ item: ItemMatcher.Item, of cards: Cards) -> Card
        where Cards.Element == Card, Cards.Index == Int {
        var card = cards[item.members[0]]
        let copies = item.members.map { index in
            Card.Copy(source: cards[index].source, id: cards[index].id, url: cards[index].url, price: cards[index].price)
        }
        card.also = Array(copies.dropFirst())
        let priced = copies.filter { $0.price != nil }
        if !priced.isEmpty {
            card.offers = priced
            let currency = card.price?.currency ?? priced[0].price?.currency
            let best = priced.compactMap(\.price).filter { $0.currency == currency }.min { $0.amount < $1.amount }
            if let best { card.price = best }
        }
        return card
    }
}
