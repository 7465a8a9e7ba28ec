import FeedConfig
import FeedCore
import FeedEngine
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
    /// The `when:` conditions that held for this card when it was last seen (by their
    /// ``DigestCondition/description``), and `out_of_stock`: a state is reported when it
    /// starts to hold, not while it goes on holding.
    public var holding: Set<String> = []

    public init(card: Card, firstSeen: Date, lastSeen: Date, price: Decimal?, reported: Bool, present: Bool,
                holding: Set<String> = []) {
        self.holding = holding
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
        /// A `when:` state began to hold: price below, back in stock, a rule matching.
        case alert
    }

    public var change: Change
    public var card: Card
    public var previousPrice: Decimal?
    /// For an alert, the condition that began to hold (`price below 200`).
    public var condition: String?

    public init(change: Change, card: Card, previousPrice: Decimal? = nil, condition: String? = nil) {
        self.change = change
        self.card = card
        self.previousPrice = previousPrice
        self.condition = condition
    }

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
    /// Cards the card store keeps: their rows hold no copy of the card (set by the job,
    /// which read them from the store).
    public var cardStoreHolds: Set<String> = []

    /// Compares `cards` of the `available` sources with `memory`. Sources not available
    /// (failed, or served from a recorded snapshot) change nothing: their cards are neither
    /// new nor removed. `knownSources` are those this digest has seen available before.
    /// With `conditions` (a digest's `when:`), only those are reported; see
    /// ``DigestCondition``.
    public static func make(memory: [String: DigestEntry], cards: [Card], available: [String], knownSources: Set<String>,
                            options: DigestOptions, conditions: [DigestCondition] = [], now: Date) -> DigestPlan {
        if !conditions.isEmpty {
            return alerts(memory: memory, cards: cards, available: available, knownSources: knownSources, options: options,
                          conditions: conditions, now: now)
        }
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
        return finish(candidates: candidates.map { ([$0.item], $0.write) }, writes: writes, available: available,
                      knownSources: knownSources, baseline: baseline, options: options)
    }

    /// Orders the reported changes by source (run order; within one, feed order), keeps
    /// `max_items` of them, and leaves the rest for the next run: a deferred card writes
    /// nothing, so the next run finds it again.
    private static func finish(candidates: [(items: [DigestItem], write: DigestEntry)], writes: [DigestEntry], available: [String],
                               knownSources: Set<String>, baseline: Int, options: DigestOptions) -> DigestPlan {
        let order = Dictionary(uniqueKeysWithValues: available.enumerated().map { ($1, $0) })
        let sorted = candidates.enumerated().sorted {
            (order[$0.element.write.source] ?? 0, $0.offset) < (order[$1.element.write.source] ?? 0, $1.offset)
        }.map(\.element)
        var kept: [(items: [DigestItem], write: DigestEntry)] = []
        var count = 0
        for candidate in sorted {
            // A card's items go together; the first card always goes, however many it has.
            guard kept.isEmpty || count + candidate.items.count <= options.maxItems ?? Int.max else { break }
            kept.append(candidate)
            count += candidate.items.count
        }
        let deferred = sorted.dropFirst(kept.count).reduce(0) { $0 + $1.items.count }
        let keptIDs = Set(kept.map(\.write.cardID))
        let writes = writes.filter { !keptIDs.contains($0.cardID) } + kept.map(\.write)
        return DigestPlan(items: kept.flatMap(\.items), writes: writes,
                          newlyKnownSources: available.filter { !knownSources.contains($0) },
                          baselineCount: baseline, deferred: deferred)
    }

    /// The plan of a digest with `when:` conditions.
    private static func alerts(memory: [String: DigestEntry], cards: [Card], available: [String], knownSources: Set<String>,
                               options: DigestOptions, conditions: [DigestCondition], now: Date) -> DigestPlan {
        let availableSet = Set(available)
        var candidates: [(items: [DigestItem], write: DigestEntry)] = []
        var writes: [DigestEntry] = []
        var baseline = 0
        for card in cards where availableSet.contains(card.source) {
            let price = card.price?.amount
            let known = memory[card.id]
            // What is written when nothing is reported: the sighting, the state unchanged.
            var seen = known ?? DigestEntry(card: card, firstSeen: now, lastSeen: now, price: price, reported: false, present: true)
            seen.lastSeen = now
            seen.present = true
            seen.card = card
            var updated = seen
            var items: [DigestItem] = []
            if known == nil, !knownSources.contains(card.source), !options.reportFirstRun { baseline += 1 }
            for condition in conditions where condition.concerns(card) {
                let key = condition.description
                switch condition.test {
                case .new:
                    if known == nil, knownSources.contains(card.source) || options.reportFirstRun {
                        items.append(DigestItem(change: .new, card: card))
                    }
                case .priceDrop(let percent):
                    guard known != nil, let reference = updated.price, let price else {
                        if updated.price == nil { updated.price = price }
                        continue
                    }
                    if price > reference {
                        // Drops count from the highest price since the last report.
                        updated.price = price
                    } else if price < reference, reference > 0, (reference - price) / reference * 100 >= percent {
                        items.append(DigestItem(change: .priceDrop, card: card, previousPrice: reference))
                        updated.price = price
                    }
                case .priceBelow(let limit):
                    let holds = price.map { $0 < limit } ?? false
                    if holds, !updated.holding.contains(key) { items.append(DigestItem(change: .alert, card: card, condition: condition.label)) }
                    if holds { updated.holding.insert(key) } else { updated.holding.remove(key) }
                case .backInStock:
                    let out = card.inStock == false
                    if !out, updated.holding.contains(Self.outOfStock) {
                        items.append(DigestItem(change: .alert, card: card, condition: condition.label))
                    }
                    if out { updated.holding.insert(Self.outOfStock) } else { updated.holding.remove(Self.outOfStock) }
                case .rule(let rule):
                    let holds = rule.matches(card, now: now)
                    if holds, !updated.holding.contains(key) { items.append(DigestItem(change: .alert, card: card, condition: condition.label)) }
                    if holds { updated.holding.insert(key) } else { updated.holding.remove(key) }
                }
            }
            if items.isEmpty {
                writes.append(updated)
            } else {
                updated.reported = true
                candidates.append((items, updated))
                // Until the report is delivered, only the sighting is written.
                if known != nil { writes.append(seen) }
            }
        }
        let seenIDs = Set(cards.map(\.id))
        for entry in memory.values.sorted(by: { $0.cardID < $1.cardID })
        where entry.present && availableSet.contains(entry.source) && !seenIDs.contains(entry.cardID) {
            var gone = entry
            gone.present = false
            writes.append(gone)
        }
        return finish(candidates: candidates, writes: writes, available: available, knownSources: knownSources,
                      baseline: baseline, options: options)
    }

    /// The state `back_in_stock` remembers.
    static let outOfStock = "out_of_stock"
}
