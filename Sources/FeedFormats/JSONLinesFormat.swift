import Dispatch
import FeedCore
import Foundation

/// One compact JSON object per line, sorted keys (the default when piped).
public struct JSONLinesFormat: CardFormat {
    public static let name = "jsonl"
    public static let mediaType = "application/jsonl; charset=utf-8"
    public static let summary = "one JSON object per line (default when piped)"

    /// Cards per block of lines made on one core.
    static let block = 1024

    public init() {}

    /// A dump of thousands of cards has its lines made on every core, a few blocks at a
    /// time, and written in order as each round is done: still streamed, and the formatting
    /// (a sixth of a large cold run) no longer waits on one core.
    public func write(_ document: FeedDocument, to out: inout FormattedOutput) {
        let cards = document.cards
        let lanes = ProcessInfo.processInfo.activeProcessorCount
        guard lanes > 1, cards.count >= 2 * Self.block else {
            out.write(bytes: Self.lines(cards[...], kept: document.kept))
            return
        }
        var start = cards.startIndex
        while start < cards.endIndex {
            let end = min(start + Self.block * lanes, cards.endIndex)
            for block in Self.blocks(cards[start..<end], kept: document.kept) { out.write(bytes: block) }
            start = end
        }
    }

    static func lines(_ cards: Slice<FeedCards>, kept: [String: KeptDates]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(cards.count * 400)
        for card in cards {
            JSONLines.append(card, kept: kept.isEmpty ? nil : kept[card.id], to: &bytes)
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    /// The lines of `cards`, one block of ``block`` cards per task, in order.
    static func blocks(_ cards: Slice<FeedCards>, kept: [String: KeptDates]) -> [[UInt8]] {
        let count = (cards.count + block - 1) / block
        var blocks = [[UInt8]](repeating: [], count: count)
        blocks.withUnsafeMutableBufferPointer { buffer in
            // Each task writes its own slot only.
            nonisolated(unsafe) let slots = buffer
            DispatchQueue.concurrentPerform(iterations: count) { index in
                let low = cards.startIndex + index * block
                slots[index] = lines(cards[low..<min(low + block, cards.endIndex)], kept: kept)
            }
        }
        return blocks
    }
}
