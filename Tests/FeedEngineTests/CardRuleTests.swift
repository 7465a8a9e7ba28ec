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
}
