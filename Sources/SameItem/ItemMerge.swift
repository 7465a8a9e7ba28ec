import FeedCore
import Foundation

/// One card per item: the item's first card (first seen, else first in the feed) with
/// `also` listing every other copy, `offers` every copy's price, and its price the lowest
/// of those in its own currency. Prices in other currencies are listed, never converted or
/// compared.
public enum ItemMerge {
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
