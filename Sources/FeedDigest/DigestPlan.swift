import FeedCore
import Foundation

/// What a digest remembers about one card.
public struct DigestEntry: Sendable, Equatable {
    public var cardID: String
    public var source: String
    public var firstSeen: Date
    public var lastSeen: Date
    /// The price when this digest last reported the card, or first saw it.
    public var price: Decimal?
    public var reported: Bool
    /// Seen in the last run in which its source was available.
    public var present: Bool
    /// The card as last seen, so a removal can still be shown.
    public var card: Card

    public init(card: Card, firstSeen: Date, lastSeen: Date, price: Decimal?, reported: Bool, present: Bool) {
        self.cardID = card.id
        self.source = card.source
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.price = price
        self.reported = reported
        self.present = present
        self.card = card
    }
}

/// One reported change.
public struct DigestItem: Sendable, Equatable {
    public enum Change: String, Sendable {
        case new
        case priceDrop = "price_drop"
        case priceRise = "price_rise"
        case removed
    }

    public var change: Change
    public var card: Card
    public var previousPrice: Decimal?

    /// Whole percent from the previous price: -6 for a 6 % drop.
    public var percent: Int? {
        guard let previous = previousPrice, previous > 0, let now = card.price?.amount else { return nil }
        return NSDecimalNumber(decimal: Money.rounded((now - previous) / previous * 100, scale: 0)).intValue
    }
}

/// How the report treats what it finds.
public struct DigestOptions: Sendable {
    /// Report every card of a source this digest has never seen available, instead of
    /// recording them silently as a baseline.
    public var reportFirstRun = false
    public var includeRises = false
    public var includeRemoved = false
    public var maxItems: Int?

    public init(reportFirstRun: Bool = false, includeRises: Bool = false, includeRemoved: Bool = false, maxItems: Int? = nil) {
        self.reportFirstRun = reportFirstRun
        self.includeRises = includeRises
        self.includeRemoved = includeRemoved
        self.maxItems = maxItems
    }
}

/// The outcome of comparing this run's cards with the digest's memory: what to report,
/// and what the state becomes once the report is out.
public struct DigestPlan: Sendable {
    public var items: [DigestItem]
    /// Rows to write (insert or replace) when the report has been delivered.
    public var writes: [DigestEntry]
    /// Sources seen available for the first time (their cards form the baseline).
    public var newlyKnownSources: [String]
    /// Cards recorded silently as a baseline.
    public var baselineCount: Int
    /// Changes left for the next run by `max_items`.
    public var deferred: Int

    /// Compares `cards` of the `available` sources with `memory`. Sources not available
    /// (failed, or served from a recorded snapshot) change nothing: their cards are neither
    /// new nor removed. `knownSources` are those this digest has seen available before.
    public static func make(memory: [String: DigestEntry], cards: [Card], available: [String], knownSources: Set<String>,
                            options: DigestOptions, now: Date) -> DigestPlan {
        let availableSet = Set(available)
        var candidates: [(item: DigestItem, write: DigestEntry)] = []
        var writes: [DigestEntry] = []
        var baseline = 0
        var seen = Set<String>()
        for card in cards where availableSet.contains(card.source) {
            seen.insert(card.id)
            let price = card.price?.amount
            guard var entry = memory[card.id] else {
                let fresh = DigestEntry(card: card, firstSeen: now, lastSeen: now, price: price, reported: true, present: true)
                if knownSources.contains(card.source) || options.reportFirstRun {
                    candidates.append((DigestItem(change: .new, card: card), fresh))
                } else {
                    var silent = fresh
                    silent.reported = false
                    writes.append(silent)
                    baseline += 1
                }
                continue
            }
            entry.lastSeen = now
            entry.present = true
            entry.card = card
            if let old = entry.price, let new = price, new < old || (options.includeRises && new > old) {
                var reported = entry
                reported.price = new
                reported.reported = true
                candidates.append((DigestItem(change: new < old ? .priceDrop : .priceRise, card: card, previousPrice: old), reported))
                // Until the change is delivered, only the sighting is written.
                writes.append(entry)
                continue
            }
            if entry.price == nil { entry.price = price }
            writes.append(entry)
        }
        for entry in memory.values.sorted(by: { $0.cardID < $1.cardID })
        where entry.present && availableSet.contains(entry.source) && !seen.contains(entry.cardID) {
            var gone = entry
            gone.present = false
            if options.includeRemoved {
                candidates.append((DigestItem(change: .removed, card: entry.card, previousPrice: nil), gone))
            } else {
                writes.append(gone)
            }
        }
        // Group by source in the run's source order; within one, feed order then removals.
        let order = Dictionary(uniqueKeysWithValues: available.enumerated().map { ($1, $0) })
        candidates = candidates.enumerated().sorted {
            (order[$0.element.item.card.source] ?? 0, $0.offset) < (order[$1.element.item.card.source] ?? 0, $1.offset)
        }.map(\.element)
        let limit = options.maxItems ?? candidates.count
        let kept = candidates.prefix(limit)
        // A deferred change writes nothing, so the next run finds it again.
        let keptIDs = Set(kept.map(\.write.cardID))
        writes = writes.filter { !keptIDs.contains($0.cardID) }
        writes += kept.map(\.write)
        return DigestPlan(items: kept.map(\.item), writes: writes,
                          newlyKnownSources: available.filter { !knownSources.contains($0) },
                          baselineCount: baseline, deferred: candidates.count - kept.count)
    }
}
