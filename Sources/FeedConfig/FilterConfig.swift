import FeedCore
import Foundation

extension CardFilter {
    /// Reads `filters:` (`keep:` and `drop:` lists of rules) from `map`; empty when absent.
    static func read(in map: ConfigMapReader) -> CardFilter {
        guard let block = map.map("filters") else { return CardFilter() }
        block.rejectUnknownKeys(["keep", "drop"])
        return CardFilter(keep: block.mapList("keep")?.compactMap { CardRule.read($0) } ?? [],
                          drop: block.mapList("drop")?.compactMap { CardRule.read($0) } ?? [])
    }
}

extension CardRule {
    /// The keys a rule is made of.
    static let keys = ["field", "match", "price", "published", "currency"]

    /// Reads one rule, reporting every problem in it; nil when it has any. `otherKeys` are
    /// allowed beside the rule's own (a digest condition's `ids:`).
    static func read(_ rule: ConfigMapReader, otherKeys: [String] = []) -> CardRule? {
        let before = rule.issues.issues.count
        rule.rejectUnknownKeys(keys + otherKeys)
        var tests: [Test] = []
        let fields = Field.allCases.map(\.rawValue)
        let field = rule.choice("field", from: fields).flatMap(Field.init(rawValue:))
        let match = rule.string("match")
        if rule.node("field") != nil, rule.node("match") == nil {
            rule.report("match", "is required with field: a regular expression to match the field with")
        }
        if rule.node("match") != nil, rule.node("field") == nil {
            rule.report("field", "is required with match: one of \(fields.joined(separator: ", "))")
        }
        if let field, let match {
            do {
                tests.append(.matches(field, try CardPattern(match)))
            } catch {
                rule.report("match", "\"\(match)\" \(error)")
            }
        }
        if let price = rule.map("price") {
            price.rejectUnknownKeys(["below", "above"])
            if let below = price.decimal("below") { tests.append(.priceBelow(below)) }
            if let above = price.decimal("above") { tests.append(.priceAbove(above)) }
            if price.node("below") == nil, price.node("above") == nil { rule.report("price", "needs below:, above: or both, like {below: 50}") }
        }
        if let published = rule.map("published") {
            published.rejectUnknownKeys(["newer_than", "older_than"])
            for key in ["newer_than", "older_than"] {
                guard let text = published.string(key) else { continue }
                guard let seconds = DigestConfig.seconds(fromDuration: text) else {
                    published.report(key, "expected a duration such as 90m, 12h, 14d or 2w, got \"\(text)\"")
                    continue
                }
                tests.append(key == "newer_than" ? .newerThan(seconds, written: text) : .olderThan(seconds, written: text))
            }
            if published.node("newer_than") == nil, published.node("older_than") == nil {
                rule.report("published", "needs newer_than:, older_than: or both, like {newer_than: 14d}")
            }
        }
        if let code = rule.string("currency") {
            if code.count == 3, code.allSatisfy({ $0.isASCII && $0.isLetter }) {
                tests.append(.currency(code.uppercased()))
            } else {
                rule.report("currency", "expected an ISO 4217 code such as USD, got \"\(code)\"")
            }
        }
        if tests.isEmpty, rule.issues.issues.count == before {
            rule.report(nil, "is an empty rule: give it field: and match:, price:, published: or currency:")
        }
        return rule.issues.issues.count == before ? CardRule(tests: tests, location: rule.location) : nil
    }
}
