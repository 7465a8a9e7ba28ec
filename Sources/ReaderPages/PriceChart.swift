import FeedCore
import FeedFormats
import FeedState
import FeedSupport
import Foundation

/// A kept card's price over time, drawn on the server as SVG (no script): one point per
/// price the store recorded — the first when the card was first seen, then one per change
/// in its history — joined by steps, with the current, lowest and highest marked and said
/// in words for those who do not see it.
package struct PriceChart {
    package struct Point {
        package var at: Date
        package var amount: Decimal
    }

    package let points: [Point]
    package let currency: String?
    package let until: Date

    /// The chart of `kept` with `history`, nil for a card that never had a price.
    package init?(kept: KeptCard, history: [CardChange], now: Date) {
        var points: [Point] = []
        let changes = history.filter { $0.field == .price }
        let first = changes.first.map { Self.amount($0.before) } ?? kept.card.price?.amount
        if let first { points.append(Point(at: kept.dates.firstSeen, amount: first)) }
        for change in changes {
            if let amount = Self.amount(change.after) { points.append(Point(at: change.at, amount: amount)) }
        }
        guard !points.isEmpty else { return nil }
        self.points = points
        currency = kept.card.price?.currency
        until = max(kept.dates.goneSince ?? now, points.last?.at ?? now)
    }

    package static func amount(_ value: JSONValue) -> Decimal? {
        guard case .object(let price) = value, case .number(let amount)? = price["amount"] else { return nil }
        return amount
    }

    package func label(_ amount: Decimal) -> String { Money.format(amount, currency: currency) }

    package static let width = 640.0, height = 240.0, margin = 40.0

    /// The template's fields: the polyline, each point with its place, and the words.
    package var context: [String: Any] {
        let low = points.map(\.amount).min() ?? 0, high = points.map(\.amount).max() ?? 0
        let start = points[0].at.timeIntervalSince1970
        let span = max(until.timeIntervalSince1970 - start, 1)
        let range = NSDecimalNumber(decimal: high - low).doubleValue
        func x(_ date: Date) -> Double { Self.margin + (date.timeIntervalSince1970 - start) / span * (Self.width - 2 * Self.margin) }
        func y(_ amount: Decimal) -> Double {
            guard range > 0 else { return Self.height / 2 }
            return Self.height - Self.margin - NSDecimalNumber(decimal: amount - low).doubleValue / range * (Self.height - 2 * Self.margin)
        }
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        // Steps: a price holds until the next one.
        var path: [String] = []
        for (index, point) in points.enumerated() {
            if index > 0 { path.append("\(number(x(point.at))),\(number(y(points[index - 1].amount)))") }
            path.append("\(number(x(point.at))),\(number(y(point.amount)))")
        }
        path.append("\(number(x(until))),\(number(y(points[points.count - 1].amount)))")
        let lowest = points.firstIndex { $0.amount == low } ?? 0
        let highest = points.firstIndex { $0.amount == high } ?? 0
        let current = points.count - 1
        let marked: [[String: Any]] = points.enumerated().map { index, point in
            var roles: [String] = []
            if index == current { roles.append("current") }
            if index == lowest { roles.append("lowest") }
            if index == highest && high != low { roles.append("highest") }
            return ["x": number(x(point.at)), "y": number(y(point.amount)), "at": RFC3339.string(from: point.at),
                    "amount": "\(point.amount)", "label": label(point.amount), "roles": roles.joined(separator: " "),
                    "has_roles": !roles.isEmpty, "named": roles.joined(separator: ", ")]
        }
        let words = "Now \(label(points[current].amount)); lowest \(label(low)) on \(ReaderPage.exact(points[lowest].at)); "
            + "highest \(label(high)) on \(ReaderPage.exact(points[highest].at)); \(points.count) price\(points.count == 1 ? "" : "s") recorded."
        return ["width": Int(Self.width), "height": Int(Self.height), "path": path.joined(separator: " "), "points": marked,
                "description": words, "low_label": label(low), "high_label": label(high),
                "low_y": number(y(low)), "high_y": number(y(high))]
    }
}
