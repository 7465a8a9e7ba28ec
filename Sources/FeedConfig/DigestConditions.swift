import FeedCore
import Foundation

/// One entry of a digest's `when:`: a condition a card is reported for. `new` is a
/// change; the others are states, reported once when they start to hold, and again only
/// after they stopped holding and hold again.
public struct DigestCondition: Sendable, CustomStringConvertible {
    public enum Test: Sendable {
        /// A card this digest has not seen before (the first run of a source is a baseline).
        case new
        /// The price fell at least this many percent below the highest price since the card
        /// was last reported (or first seen).
        case priceDrop(percent: Decimal)
        /// The price is below the amount.
        case priceBelow(Decimal)
        /// The source said the item was out of stock, and now does not.
        case backInStock
        /// A filter rule matches.
        case rule(CardRule)
    }

    public var test: Test
    /// Only these card ids (`target:12`); empty = every card.
    public var ids: [String]
    public var location: ConfigLocation

    public init(_ test: Test, ids: [String] = [], location: ConfigLocation = ConfigLocation(file: "Sources.yml", line: 1, column: 1)) {
        self.test = test
        self.ids = ids
        self.location = location
    }

    /// Whether the condition concerns `card` at all (its `ids:`).
    public func concerns(_ card: Card) -> Bool {
        ids.isEmpty || ids.contains(card.id)
    }

    /// The condition as Sources.yml writes it; also the key its state is kept under, so
    /// a changed condition starts afresh.
    public var description: String {
        let only = ids.isEmpty ? "" : ", ids: [\(ids.joined(separator: ", "))]"
        switch test {
        case .new: return ids.isEmpty ? "new" : "{new: true\(only)}"
        case .priceDrop(let percent): return "{price_drop: {percent: \(percent)}\(only)}"
        case .priceBelow(let amount): return "{price_below: \(amount)\(only)}"
        case .backInStock: return ids.isEmpty ? "back_in_stock" : "{back_in_stock: true\(only)}"
        case .rule(let rule): return ids.isEmpty ? rule.description : "\(rule.description.dropLast())\(only)}"
        }
    }

    /// The digest's report line for it: `price below 200`.
    public var label: String {
        switch test {
        case .new: "new"
        case .priceDrop(let percent): "price down \(percent)% or more"
        case .priceBelow(let amount): "price below \(amount)"
        case .backInStock: "back in stock"
        case .rule(let rule): "matches \(rule)"
        }
    }

    /// The default of a digest without `when:`: what is new, and any price drop.
    public static let changes = [DigestCondition(.new), DigestCondition(.priceDrop(percent: 0))]

    static let names = ["new", "price_drop", "price_below", "back_in_stock"]

    /// Reads one entry of `when:`: a name (`new`, `back_in_stock`, `price_drop`) or a
    /// mapping (`{price_below: 200, ids: [target:1]}`, or a filter rule).
    static func read(_ node: ConfigNode, path: String, sourceIDs: [String], issues: ConfigIssueLog) -> DigestCondition? {
        if case .scalar(let scalar) = node.value {
            switch scalar.text {
            case "new": return DigestCondition(.new, location: node.location)
            case "back_in_stock": return DigestCondition(.backInStock, location: node.location)
            case "price_drop": return DigestCondition(.priceDrop(percent: 0), location: node.location)
            default:
                issues.report(ConfigIssue(location: node.location, path: path, message:
                    "unknown condition \"\(scalar.text)\" (known: new, back_in_stock, price_drop: {percent: 10}, price_below: 100, or a filter rule)"))
                return nil
            }
        }
        let entry = ConfigMapReader(node: node, path: path, fallbackLocation: node.location, issues: issues)
        let before = issues.issues.count
        let ids = readIDs(entry, sourceIDs: sourceIDs)
        let named = names.filter { entry.node($0) != nil }
        if named.count > 1 {
            entry.report(nil, "gives \(named.joined(separator: " and ")): write one condition per entry")
            return nil
        }
        let test: Test?
        switch named.first {
        case "new":
            entry.rejectUnknownKeys(["new", "ids"])
            test = entry.boolean("new") == false ? nil : .new
        case "back_in_stock":
            entry.rejectUnknownKeys(["back_in_stock", "ids"])
            test = entry.boolean("back_in_stock") == false ? nil : .backInStock
        case "price_below":
            entry.rejectUnknownKeys(["price_below", "ids"])
            test = entry.decimal("price_below").map { .priceBelow($0) }
        case "price_drop":
            entry.rejectUnknownKeys(["price_drop", "ids"])
            let drop = entry.map("price_drop")
            drop?.rejectUnknownKeys(["percent"])
            let percent = drop?.decimal("percent") ?? 0
            if percent < 0 || percent >= 100 { entry.report("price_drop", "percent must be from 0 to 99, got \(percent)") }
            test = .priceDrop(percent: percent)
        default:
            test = CardRule.read(entry, otherKeys: ["ids"] + names).map { .rule($0) }
        }
        guard let test, issues.issues.count == before else { return nil }
        return DigestCondition(test, ids: ids, location: entry.location)
    }

    private static func readIDs(_ entry: ConfigMapReader, sourceIDs: [String]) -> [String] {
        var ids: [String] = []
        for (path, node) in entry.list("ids") ?? [] {
            guard case .scalar(let scalar) = node.value, let colon = scalar.text.firstIndex(of: ":"),
                  colon != scalar.text.startIndex, colon != scalar.text.index(before: scalar.text.endIndex) else {
                entry.issues.report(ConfigIssue(location: node.location, path: path, message: "expected a card id such as target:12"))
                continue
            }
            let source = String(scalar.text[..<colon])
            if !sourceIDs.contains(source) {
                entry.issues.report(ConfigIssue(location: node.location, path: path,
                    message: "\"\(scalar.text)\" names no configured source (known: \(sourceIDs.joined(separator: ", ")))"))
            }
            ids.append(scalar.text)
        }
        return ids
    }
}
