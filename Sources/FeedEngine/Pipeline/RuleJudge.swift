import FeedConfig
import FeedCore
import Foundation

/// The filter rules of one source's run, applied to its pages on a thread of their own.
///
/// Rules are the one place where text from upstreams meets an expression from the config
/// that can take long: each match is bounded (``CardPattern/timeLimit``), and a rule
/// that runs out of time on ``giveUpAfter`` cards of a source is not tried on the rest of
/// its cards in that run. Pages are judged on a serial queue, not on Swift's cooperative
/// threads, so however long rules take, `serve` still answers other requests (`/healthz`
/// among them) and still shuts down.
struct RuleJudge: Sendable {
    /// The top-level `filters:` and the source's own: a card must pass both.
    let filters: [CardFilter]
    /// The time `published: {newer_than: …}` counts from.
    let now: Date
    /// How many cards a rule may run out of time on before it is given up for the run.
    static let giveUpAfter = 3

    /// The rules that ran out of time, by where they are written: how often, and the rule.
    private(set) var timeouts: [ConfigLocation: (rule: CardRule, cards: Int)] = [:]

    private static let queue = DispatchQueue(label: "aggregate.filter-rules", qos: .utility)

    init(filters: [CardFilter], now: Date) {
        self.filters = filters.filter { !$0.isEmpty }
        self.now = now
    }

    var isEmpty: Bool { filters.isEmpty }

    /// Why each card of `page` is left out (`dropped by drop rule {…} (Sources.yml:4:9)`),
    /// nil where it passes every filter. Only the first `budget` cards with a title are
    /// judged (the source's budget ends the walk there); the rest are nil, never read.
    mutating func reasons(for page: [Card], budget: Int) async -> [String?] {
        guard !filters.isEmpty, !page.isEmpty, budget > 0 else { return Array(repeating: nil, count: page.count) }
        let judge = self
        let (reasons, after) = await withCheckedContinuation { (continuation: CheckedContinuation<([String?], RuleJudge), Never>) in
            Self.queue.async {
                var working = judge
                var judged = 0
                let reasons = page.map { card -> String? in
                    guard judged < budget, !card.title.isEmpty else { return nil }
                    judged += 1
                    return working.reason(for: card)
                }
                continuation.resume(returning: (reasons, working))
            }
        }
        self = after
        return reasons
    }

    private mutating func reason(for card: Card) -> String? {
        let givenUp = Set(timeouts.filter { $0.value.cards >= Self.giveUpAfter }.keys)
        for filter in filters {
            let (verdict, outOfTime) = filter.evaluate(card, now: now, skipping: givenUp)
            for rule in outOfTime {
                timeouts[rule.location, default: (rule, 0)].cards += 1
            }
            switch verdict {
            case .passes:
                continue
            case .dropped(let index):
                let rule = filter.drop[index]
                return "dropped by drop rule \(rule) (\(rule.location))"
            case .notKept:
                let place = filter.keep.first.map { " (\($0.location))" } ?? ""
                return "matched no keep rule\(place)"
            }
        }
        return nil
    }

    /// The rules that ran out of time, for the source's outcome.
    var timeoutReport: [SourceOutcome.RuleTimeout] {
        timeouts.sorted { $0.key < $1.key }.map { location, entry in
            SourceOutcome.RuleTimeout(rule: entry.rule.description, location: location, cards: entry.cards,
                                      givenUp: entry.cards >= Self.giveUpAfter)
        }
    }
}
