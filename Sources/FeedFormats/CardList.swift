import FeedCore
import Foundation

/// One source's cards as a run holds them until it prints them: `Card` values, or packed
/// (``PackedCards``) when the run reads every card of every source.
///
/// A run that prints every card cannot print the first before the last source is read
/// (feed order takes the first card of each source, then the second of each), so it holds
/// them all; as values, a card is a 336-byte struct, a Foundation `URL` of about 430 bytes
/// and its strings, about 1 KB a card in all, and 50,000 cards of shop pages held 64 MiB.
/// Packed, the same card is about 150 bytes, read back one at a time as it is printed.
package struct CardList: Sendable {
    private enum Storage: Sendable {
        case values([Card])
        case packed(PackedCards)
    }

    private let storage: Storage

    /// `cards` as they are.
    package init(_ cards: [Card]) {
        storage = .values(cards)
    }

    /// `cards` packed: what the list keeps is their bytes (their values, in the unlikely
    /// case of more than 4 GiB of them).
    package init(packing cards: [Card]) {
        storage = PackedCards(cards).map { .packed($0) } ?? .values(cards)
    }

    package var count: Int {
        switch storage {
        case .values(let cards): cards.count
        case .packed(let packed): packed.count
        }
    }

    package var isEmpty: Bool { count == 0 }

    package subscript(index: Int) -> Card {
        switch storage {
        case .values(let cards): cards[index]
        case .packed(let packed): packed[index]
        }
    }

    /// The card's id, without making the card.
    package func id(at index: Int) -> String {
        switch storage {
        case .values(let cards): cards[index].id
        case .packed(let packed): packed.id(at: index)
        }
    }

    /// When the card was published, without making the card.
    package func published(at index: Int) -> Date? {
        switch storage {
        case .values(let cards): cards[index].published
        case .packed(let packed): packed.published(at: index)
        }
    }

    /// The amount of the card's price, without making the card.
    package func priceAmount(at index: Int) -> Decimal? {
        switch storage {
        case .values(let cards): cards[index].price?.amount
        case .packed(let packed): packed.priceAmount(at: index)
        }
    }

    /// Every card as a value (made anew from the bytes when packed).
    package var values: [Card] {
        switch storage {
        case .values(let cards): cards
        case .packed(let packed): (0..<packed.count).map { packed[$0] }
        }
    }
}

/// Cards in ``CardBinaryCoding``'s layout, one after another in one buffer, with where each
/// begins beside them; a card's date comes first in it, so a run by date orders them
/// without reading them back.
package struct PackedCards: Sendable {
    private let shared: SharedPrefixes
    private let bytes: [UInt8]
    /// 32 bits a card: half of what `Int` takes, at 50,000 cards 0.2 MB of a run's peak.
    private let starts: [UInt32]

    /// Nil when the cards take more than `UInt32` can point into.
    package init?(_ cards: [Card]) {
        let shared = SharedPrefixes(of: cards)
        var writer = BinaryWriter()
        var starts: [UInt32] = []
        starts.reserveCapacity(cards.count)
        for card in cards {
            guard let start = UInt32(exactly: writer.bytes.count) else { return nil }
            starts.append(start)
            CardBinaryCoding.encode(card, sharing: shared, into: &writer)
        }
        // The writer's buffer grew by doubling: keep a copy of only what was written.
        bytes = writer.bytes.withUnsafeBufferPointer { Array($0) }
        self.shared = shared
        self.starts = starts
    }

    package var count: Int { starts.count }

    package subscript(index: Int) -> Card {
        read(index) { reader throws(BinaryReader.Malformed) in try CardBinaryCoding.decodeCard(from: &reader, sharing: shared) }
    }

    package func id(at index: Int) -> String {
        read(index) { reader throws(BinaryReader.Malformed) in try CardBinaryCoding.id(from: &reader, sharing: shared) }
    }

    package func priceAmount(at index: Int) -> Decimal? {
        read(index) { reader throws(BinaryReader.Malformed) in try CardBinaryCoding.priceAmount(from: &reader) }
    }

    package func published(at index: Int) -> Date? {
        read(index) { reader throws(BinaryReader.Malformed) in try CardBinaryCoding.published(from: &reader) }
    }

    private func read<Value>(_ index: Int, _ body: (inout BinaryReader) throws(BinaryReader.Malformed) -> Value) -> Value {
        var reader = BinaryReader(bytes, offset: Int(starts[index]))
        do {
            return try body(&reader)
        } catch {
            // The bytes were written by `init` from cards in this process, not read from outside.
            preconditionFailure("a packed card did not read back")
        }
    }
}
