import FeedCore
import Foundation

/// A discount rule from Sources.yml, applied to one product code.
struct OfferRule: Sendable, Equatable {
    enum Deal: Sendable, Equatable {
        /// Buy `buy`, pay for `pay` (2-for-1 is buy 2, pay 1).
        case multibuy(buy: Int, pay: Int)
        /// `minQuantity` or more cost `unitPrice` each.
        case bulk(minQuantity: Int, unitPrice: Decimal)
    }

    var code: String
    var deal: Deal

    /// The defaults of the Cabify challenge: 2-for-1 on VOUCHER, 3+ TSHIRT at 19.00.
    static let defaults = [
        OfferRule(code: "VOUCHER", deal: .multibuy(buy: 2, pay: 1)),
        OfferRule(code: "TSHIRT", deal: .bulk(minQuantity: 3, unitPrice: 19)),
    ]

    /// Plain words for the card: `2 for 1`, `3+ for €19.00 each`.
    func label(currency: String) -> String {
        switch deal {
        case .multibuy(let buy, let pay): "\(buy) for \(pay)"
        case .bulk(let minimum, let price): "\(minimum)+ for \(Money.format(price, currency: currency)) each"
        }
    }

    /// What `quantity` units cost under this rule at `listPrice` each.
    func total(quantity: Int, listPrice: Decimal) -> Decimal {
        switch deal {
        case .multibuy(let buy, let pay):
            let paid = quantity / buy * pay + quantity % buy
            return Decimal(paid) * listPrice
        case .bulk(let minimum, let price):
            return Decimal(quantity) * (quantity >= minimum ? price : listPrice)
        }
    }

    /// Reads `offers:`; every problem is reported with its position. Each rule comes with
    /// its entry (nil for the defaults), so later checks report at the right place.
    static func read(from options: ConfigMapReader) -> [(rule: OfferRule, entry: ConfigMapReader?)] {
        guard let entries = options.mapList("offers") else { return defaults.map { ($0, nil) } }
        var rules: [(rule: OfferRule, entry: ConfigMapReader?)] = []
        for entry in entries {
            entry.rejectUnknownKeys(["code", "type", "buy", "pay", "min_quantity", "unit_price"])
            let code = entry.string("code", required: true)
            let deal: Deal?
            switch entry.choice("type", from: ["multibuy", "bulk"]) {
            case "multibuy":
                let buy = entry.integer("buy", required: true, minimum: 2)
                let pay = entry.integer("pay", required: true, minimum: 1)
                if let buy, let pay, pay >= buy {
                    entry.report("pay", "must be less than buy (\(buy)), got \(pay)")
                }
                deal = buy.flatMap { buy in pay.flatMap { $0 < buy ? .multibuy(buy: buy, pay: $0) : nil } }
            case "bulk":
                let minimum = entry.integer("min_quantity", required: true, minimum: 2)
                let price = entry.decimal("unit_price", required: true, positive: true)
                deal = minimum.flatMap { minimum in price.map { .bulk(minQuantity: minimum, unitPrice: $0) } }
            default:
                if entry.node("type") == nil { entry.report("type", "is required (multibuy or bulk)") }
                deal = nil
            }
            guard let code, let deal else { continue }
            if rules.contains(where: { $0.rule.code == code }) {
                entry.report("code", "\"\(code)\" already has an offer; give each product one")
                continue
            }
            rules.append((OfferRule(code: code, deal: deal), entry))
        }
        return rules
    }

    /// Checks rules against a known catalogue: every code must exist and a bulk price
    /// must be below the list price.
    static func check(_ rules: [(rule: OfferRule, entry: ConfigMapReader?)], against products: [CabifyProduct],
                      currency: String) {
        let prices = Dictionary(products.map { ($0.code, $0.price) }, uniquingKeysWith: { first, _ in first })
        for case let (rule, entry?) in rules {
            guard let listPrice = prices[rule.code] else {
                entry.report("code", "unknown product code \"\(rule.code)\" (known: \(prices.keys.sorted().joined(separator: ", ")))")
                continue
            }
            if case .bulk(_, let price) = rule.deal, price >= listPrice {
                entry.report("unit_price", "\(Money.format(price, currency: currency)) is not below the list price of \(rule.code) (\(Money.format(listPrice, currency: currency)))")
            }
        }
    }
}
