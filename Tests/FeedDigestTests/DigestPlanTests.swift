import FeedConfig
import FeedCore
@testable import FeedDigest
import FeedEngine
import Foundation
import Testing

@Suite struct DigestPlanTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let earlier = Date(timeIntervalSince1970: 1_700_000_000)

    func card(_ source: String, _ id: String, _ price: String?) -> Card {
        Card(source: source, upstreamID: id, kind: .item, title: "\(source) \(id)",
             price: price.map { Price(amount: Decimal(string: $0)!, currency: "EUR") })
    }

    func memory(_ cards: [Card], present: Bool = true) -> [String: DigestEntry] {
        Dictionary(uniqueKeysWithValues: cards.map {
            ($0.id, DigestEntry(card: $0, firstSeen: earlier, lastSeen: earlier, price: $0.price?.amount, reported: false, present: present))
        })
    }

    @Test func aSourceSeenForTheFirstTimeIsABaseline() {
        let cards = [card("a", "1", "5"), card("a", "2", "7.5")]
        let plan = DigestPlan.make(memory: [:], cards: cards, available: ["a"], knownSources: [], options: DigestOptions(), now: now)
        #expect(plan.items.isEmpty)
        #expect(plan.baselineCount == 2)
        #expect(plan.newlyKnownSources == ["a"])
        #expect(plan.writes.map(\.cardID) == ["a:1", "a:2"])
        let report = DigestPlan.make(memory: [:], cards: cards, available: ["a"], knownSources: [],
                                     options: DigestOptions(reportFirstRun: true), now: now)
        #expect(report.items.map(\.change) == [.new, .new])
    }

    @Test func newAndCheaperAreReportedRisesAndRemovalsOnlyWhenAsked() {
        let before = [card("a", "1", "10"), card("a", "2", "10"), card("a", "3", "10")]
        let after = [card("a", "1", "8"), card("a", "2", "12"), card("a", "4", "1")]
        let plain = DigestPlan.make(memory: memory(before), cards: after, available: ["a"], knownSources: ["a"],
                                    options: DigestOptions(), now: now)
        #expect(plain.items.map(\.change) == [.priceDrop, .new])
        #expect(plain.items[0].previousPrice == 10)
        #expect(plain.items[0].percent == -20)
        // The rise is not reported, so the remembered price stays the reported one.
        #expect(plain.writes.first { $0.cardID == "a:2" }?.price == 10)
        #expect(plain.writes.first { $0.cardID == "a:1" }?.price == 8)
        #expect(plain.writes.first { $0.cardID == "a:3" }?.present == false)
        let all = DigestPlan.make(memory: memory(before), cards: after, available: ["a"], knownSources: ["a"],
                                  options: DigestOptions(includeRises: true, includeRemoved: true), now: now)
        #expect(all.items.map(\.change) == [.priceDrop, .priceRise, .new, .removed])
    }

    @Test func unavailableSourcesChangeNothing() {
        let before = [card("a", "1", "10"), card("b", "1", "10")]
        let plan = DigestPlan.make(memory: memory(before), cards: [card("a", "1", "10")], available: ["a"],
                                   knownSources: ["a", "b"], options: DigestOptions(includeRemoved: true), now: now)
        #expect(plan.items.isEmpty)
        #expect(!plan.writes.contains { $0.source == "b" })
    }

    @Test func maxItemsDefersTheRestWithoutWritingThem() {
        let plan = DigestPlan.make(memory: memory([card("a", "1", "10")]),
                                   cards: [card("a", "1", "9"), card("a", "2", "1"), card("a", "3", "1")],
                                   available: ["a"], knownSources: ["a"], options: DigestOptions(maxItems: 2), now: now)
        #expect(plan.items.map(\.card.id) == ["a:1", "a:2"])
        #expect(plan.deferred == 1)
        #expect(!plan.writes.contains { $0.cardID == "a:3" })
    }

    @Test func aReappearingCardIsNotNew() {
        let gone = memory([card("a", "1", "10")], present: false)
        let plan = DigestPlan.make(memory: gone, cards: [card("a", "1", "10")], available: ["a"], knownSources: ["a"],
                                   options: DigestOptions(), now: now)
        #expect(plan.items.isEmpty)
        #expect(plan.writes.first?.present == true)
    }

    /// Runs `conditions` over successive sightings of the cards, committing each plan as a
    /// store would, and gives what each run reported (`change id`).
    func alerts(_ conditions: [DigestCondition], _ runs: [[Card]]) -> [[String]] {
        var memory: [String: DigestEntry] = [:]
        var known: Set<String> = []
        return runs.map { cards in
            let plan = DigestPlan.make(memory: memory, cards: cards, available: ["a"], knownSources: known,
                                       options: DigestOptions(), conditions: conditions, now: now)
            for write in plan.writes { memory[write.cardID] = write }
            known.formUnion(plan.newlyKnownSources)
            return plan.items.map { "\($0.change.rawValue) \($0.card.id)" + ($0.condition.map { " (\($0))" } ?? "") }
        }
    }

    func stocked(_ id: String, _ price: String, inStock: Bool?) -> Card {
        var card = card("a", id, price)
        if let inStock { card.details["in_stock"] = .bool(inStock) }
        return card
    }

    @Test func backInStockFiresWhenAnItemSeenOutOfStockIsInAgain() {
        let runs = [
            [stocked("1", "5", inStock: true), stocked("2", "5", inStock: false)],
            [stocked("1", "5", inStock: true), stocked("2", "5", inStock: false)],
            [stocked("1", "5", inStock: true), stocked("2", "5", inStock: true)],
            [stocked("1", "5", inStock: false), stocked("2", "5", inStock: true)],
            [stocked("1", "5", inStock: nil), stocked("2", "5", inStock: true)],
        ]
        #expect(alerts([DigestCondition(.backInStock)], runs) == [[], [], ["alert a:2 (back in stock)"], [], ["alert a:1 (back in stock)"]])
    }

    @Test func aPriceDropCountsFromTheHighestPriceSinceItWasLastReported() {
        let runs = [[card("a", "1", "100")], [card("a", "1", "95")], [card("a", "1", "89")], [card("a", "1", "85")],
                    [card("a", "1", "100")], [card("a", "1", "90")]]
        #expect(alerts([DigestCondition(.priceDrop(percent: 10))], runs) == [[], [], ["price_drop a:1"], [], [], ["price_drop a:1"]])
    }

    @Test func aRuleAndNewAreReportedOncePerCardAndOnlyForTheirIDs() {
        let rule = CardRule(tests: [.priceBelow(6)], location: ConfigLocation(file: "S.yml", line: 1, column: 1))
        let conditions = [DigestCondition(.new), DigestCondition(.rule(rule), ids: ["a:1"])]
        let runs = [[card("a", "1", "5"), card("a", "2", "5")], [card("a", "1", "5"), card("a", "2", "5"), card("a", "3", "1")],
                    [card("a", "1", "7"), card("a", "2", "5"), card("a", "3", "1")], [card("a", "1", "5.5")]]
        #expect(alerts(conditions, runs) == [
            ["alert a:1 (matches {price: {below: 6}})"], ["new a:3"], [], ["alert a:1 (matches {price: {below: 6}})"],
        ])
    }
}
