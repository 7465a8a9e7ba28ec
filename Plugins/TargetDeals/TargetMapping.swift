import FeedCore
import Foundation

/// Deals to cards: a pure function of the wire model.
enum TargetMapping {
    /// The list's `description` is this placeholder followed by the detail URL.
    static let placeholderPrefix = "fetch full product with details from "

    /// The card for `deal`; `notes` collects what `--verbose` should say.
    static func card(for deal: TargetDeal, source: String, notes: inout [String]) -> Card {
        let regular = Money.fromMinorUnits(deal.regular_price.amount_in_cents)
        let now = deal.sale_price ?? deal.regular_price
        let amount = Money.fromMinorUnits(now.amount_in_cents)
        let currency = Money.currencyCode(forSymbol: now.currency_symbol)
        if currency == nil {
            notes.append("deal \(deal.id): unknown currency symbol \"\(now.currency_symbol)\"; price shown without a currency")
        }
        var card = Card(
            source: source, upstreamID: "\(deal.id)", kind: .deal, title: deal.title,
            summary: summary(for: deal),
            price: Price(amount: amount, currency: currency,
                         display: now.display_string ?? (currency == nil ? "\(now.currency_symbol)\(Money.fixed(amount))" : nil),
                         regular: deal.sale_price == nil ? nil : regular),
            image: deal.image_url.flatMap(ConfigMapReader.httpURL))
        if deal.sale_price != nil {
            card.tags = ["sale"]
            if let percent = Money.percentOff(regularMinor: deal.regular_price.amount_in_cents, nowMinor: now.amount_in_cents) {
                card.details["percent_off"] = .number(Decimal(percent))
            }
        }
        if let description = deal.description, !description.hasPrefix(placeholderPrefix), !description.isEmpty {
            card.details["description"] = .string(description)
        }
        if let aisle = deal.aisle, !aisle.isEmpty { card.details["aisle"] = .string(aisle.uppercased()) }
        // `In stock` / `Out of stock`: what digests' back_in_stock reads (Card.inStock).
        switch deal.availability?.lowercased() {
        case "in stock": card.details["in_stock"] = .bool(true)
        case "out of stock": card.details["in_stock"] = .bool(false)
        default: break
        }
        return card
    }

    /// `In stock · Online · Aisle B2`, from whichever of the three the deal has.
    static func summary(for deal: TargetDeal) -> String? {
        let parts = [deal.availability, deal.fulfillment, deal.aisle.map { "Aisle \($0.uppercased())" }]
            .compactMap { $0 }.filter { !$0.isEmpty }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }

    /// The detail card: the list card with the full description as its summary.
    static func detailCard(for deal: TargetDeal, source: String, notes: inout [String]) -> Card {
        var card = card(for: deal, source: source, notes: &notes)
        if let description = card.details["description"]?.stringValue { card.summary = description }
        return card
    }
}
