@testable import FeedConfig
import FeedCore
import FeedEngine
import Foundation
import Testing

/// Filter rules on cards: what an expression matches, and what is refused at load.
@Suite struct CardRuleTests {
    @Test(arguments: ["(?i)sponsored", "^(foo|bar)+$", "[(a+)]+", #"\(a+\)+"#, "(ab)?x*", "(?:a+)?", "a{2,3}", #"\d+ (TV|tv)s?"#])
    func anExpressionWithoutNestedRepetitionIsAccepted(_ expression: String) throws {
        _ = try CardPattern(expression)
    }

    @Test(arguments: ["(a+)+", #"(\w*)*"#, "((a)+)+", "(a|b+){2,}", "(?:x+y)*"])
    func aRepeatedGroupThatRepeatsInsideIsRefused(_ expression: String) {
        #expect(throws: CardPattern.Problem.nestedQuantifier) { try CardPattern(expression) }
    }

    @Test func backReferencesAndBadSyntaxAreRefused() {
        #expect(throws: CardPattern.Problem.backReference) { try CardPattern(#"(a)\1"#) }
        #expect(throws: CardPattern.Problem.syntax("expected ')'")) { try CardPattern("(unclosed") }
    }

    @Test func expressionsIgnoreCaseUnlessTheySayOtherwise() throws {
        #expect(try CardPattern("refurbished").matches("REFURBISHED TV"))
        #expect(try !CardPattern("(?-i)Refurb").matches("refurb tv"))
        #expect(try CardPattern("(?-i)Refurb").matches("Refurb tv"))
        // A field is read no further than its first 4,096 characters.
        #expect(try !CardPattern("needle").matches(String(repeating: "x", count: 4096) + "needle"))
    }

    @Test func aRuleNeedsEveryTestAndAFilterKeepsThenDrops() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var card = Card(source: "shop", upstreamID: "1", kind: .item, title: "Refurbished TV")
        card.price = Price(amount: 150, currency: "USD")
        card.published = now.addingTimeInterval(-3 * 86_400)
        let cheapUSD = CardRule(tests: [.priceBelow(200), .currency("USD")], location: ConfigLocation(file: "S.yml", line: 1, column: 1))
        let recent = CardRule(tests: [.newerThan(2 * 86_400, written: "2d")], location: ConfigLocation(file: "S.yml", line: 2, column: 1))
        #expect(cheapUSD.matches(card, now: now))
        #expect(!recent.matches(card, now: now))
        #expect(cheapUSD.description == "{currency: USD, price: {below: 200}}")
        #expect(CardFilter(keep: [recent]).verdict(card, now: now) == .notKept)
        #expect(CardFilter(keep: [recent, cheapUSD], drop: [cheapUSD]).verdict(card, now: now) == .dropped(0))
        card.price = nil
        #expect(!cheapUSD.matches(card, now: now))
    }

    /// Expressions that pass the load-time guard but backtrack without end on ordinary
    /// text, each with such a text: every one stops at the time limit and counts as no match.
    static let catastrophic: [(String, String)] = [
        (#"(.|\s)*sponsored"#, Array(repeating: "word", count: 62).joined(separator: " ")),
        ("(a|aa)*b", String(repeating: "a", count: 60)),
        (".*.*.*.*.*=x", String(repeating: "ab=", count: 40)),
        (#"(\w|\d)*!"#, String(repeating: "1", count: 60)),
        ("(?:a|aa)+$", String(repeating: "a", count: 60) + "b"),
        ("a*a*a*a*a*a*a*a*b", String(repeating: "a", count: 120)),
    ]

    @Test(arguments: 0..<catastrophic.count)
    func aMatchThatBacktracksWithoutEndStopsAtTheTimeLimit(_ index: Int) throws {
        let (expression, text) = Self.catastrophic[index]
        let pattern = try CardPattern(expression)
        let clock = ContinuousClock()
        let start = clock.now
        #expect(pattern.evaluate(text) == .outOfTime, "\(expression)")
        // The limit is 50 ms; ICU calls back every few thousand steps. A loaded CI machine
        // may take longer to get there, never seconds.
        #expect(clock.now - start < .seconds(2), "\(expression) took \(clock.now - start)")
        #expect(!pattern.matches(text))
    }

    /// The time limit counts the thread's CPU time: a thread that waits (here, asleep; on a
    /// busy machine, for a core) spends none of it, and one that works spends it.
    @Test func theTimeLimitCountsWorkNotWaiting() {
        let asleep = ThreadCPUTime.now()
        Thread.sleep(forTimeInterval: 0.2)
        #expect(ThreadCPUTime.now() - asleep < .milliseconds(50))
        // Work until 60 ms of it are counted (a clock that stood still would spin 10 s).
        let working = ThreadCPUTime.now()
        let clock = ContinuousClock()
        let start = clock.now
        while ThreadCPUTime.now() - working < .milliseconds(60), clock.now - start < .seconds(10) {}
        #expect(ThreadCPUTime.now() - working >= .milliseconds(60))
    }

    @Test func wellBehavedExpressionsFinishOnTheLongestFieldRead() throws {
        let text = String(repeating: "a refurbished tv, sponsored ", count: 200)
        #expect(try CardPattern("(?i)refurbished|sponsored").evaluate(text) == .matched)
        #expect(try CardPattern("nothing-like-this").evaluate(text) == .notMatched)
        #expect(try CardPattern(#"\bsponsored\b.*$"#).evaluate(text) == .matched)
    }

    /// A rule that runs out of time on three cards of a source is given up for the rest of
    /// its cards: 500 cards cost three time limits, not 500; the cards all pass (the drop
    /// rule matched none), and the outcome names the rule once.
    @Test func aRuleThatRunsOutOfTimeIsGivenUpForTheRestOfTheRun() async throws {
        let summary = Array(repeating: "word", count: 62).joined(separator: " ")
        let cards = (0..<500).map { Card(source: "a", upstreamID: "\($0)", kind: .post, title: "Post \($0)", summary: summary) }
        var config = FeedConfig.memory(["a"])
        let location = ConfigLocation(file: "Sources.yml", line: 4, column: 9)
        config.filters = CardFilter(drop: [CardRule(tests: [.matches(.summary, try CardPattern(#"(.|\s)*sponsored"#))], location: location)])
        let runner = FeedRunner(config: config, registry: SourceRegistry([MemorySource.self]),
                                transports: MemoryUpstream(["a": cards], pageSize: 100))
        let result = try await runner.run(FeedQuery(perPage: 1000))
        #expect(result.cards.count == 500)
        #expect(result.outcomes[0].ruleTimeouts == [
            SourceOutcome.RuleTimeout(rule: #"{field: summary, match: "(.|\\s)*sponsored"}"#, location: location, cards: 3, givenUp: true),
        ])
        #expect(result.outcomes[0].messages(verbose: false).contains(
            #"a: rule {field: summary, match: "(.|\\s)*sponsored"} (Sources.yml:4:9) ran out of time (50 ms) on 3 cards and counted as no match; "#
                + "it was not tried on the rest of this source's cards (write it so it cannot backtrack without end: no (.|\\s)*, no (a|aa)*)"))
    }

    /// Rules are tried only on the cards the budget takes: with `max_items: 2`, a runaway
    /// rule is tried on two cards of a page of 100, not on all of them.
    @Test func rulesAreTriedOnlyOnTheCardsTheBudgetTakes() async throws {
        let summary = Array(repeating: "word", count: 62).joined(separator: " ")
        let cards = (0..<100).map { Card(source: "a", upstreamID: "\($0)", kind: .post, title: "Post \($0)", summary: summary) }
        var config = FeedConfig.memory(["a"])
        config.sources[0].maxItems = 2
        let location = ConfigLocation(file: "Sources.yml", line: 4, column: 9)
        config.filters = CardFilter(drop: [CardRule(tests: [.matches(.summary, try CardPattern(#"(.|\s)*sponsored"#))], location: location)])
        let runner = FeedRunner(config: config, registry: SourceRegistry([MemorySource.self]),
                                transports: MemoryUpstream(["a": cards], pageSize: 100))
        let result = try await runner.run(FeedQuery(perPage: 100))
        #expect(result.cards.map(\.id) == ["a:0", "a:1"])
        #expect(result.outcomes[0].ruleTimeouts.map(\.cards) == [2])
    }
}
