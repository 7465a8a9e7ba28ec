import FeedCore
import Foundation

/// Everything a rendered digest shows.
public struct DigestReport: Sendable {
    public var name: String
    public var date: Date
    public var items: [DigestItem]
    /// Sources that could not be checked, with why, in run order.
    public var unavailable: [(source: String, reason: String)]

    public init(name: String, date: Date, items: [DigestItem], unavailable: [(source: String, reason: String)]) {
        self.name = name
        self.date = date
        self.items = items
        self.unavailable = unavailable
    }

    /// Items grouped by source, in the order they were planned.
    var sections: [(source: String, items: [DigestItem])] {
        var order: [String] = []
        var groups: [String: [DigestItem]] = [:]
        for item in items {
            if groups[item.card.source] == nil { order.append(item.card.source) }
            groups[item.card.source, default: []].append(item)
        }
        return order.map { ($0, groups[$0] ?? []) }
    }

    func count(_ change: DigestItem.Change) -> Int { items.filter { $0.change == change }.count }

    /// `2 new, 1 price drop`, or `no changes`.
    var countsText: String {
        let parts = [
            (count(.new), "new", "new"), (count(.priceDrop), "price drop", "price drops"),
            (count(.priceRise), "price rise", "price rises"), (count(.removed), "removed", "removed"),
            (count(.alert), "alert", "alerts"),
        ].filter { $0.0 > 0 }.map { "\($0.0) \($0.0 == 1 ? $0.1 : $0.2)" }
        return parts.isEmpty ? "no changes" : parts.joined(separator: ", ")
    }

    /// `2026-11-22 15:30 UTC`.
    var dateText: String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d UTC", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0,
                      parts.hour ?? 0, parts.minute ?? 0)
    }
}

extension DigestItem {
    /// `$149.99, was $159.99 (-6%)`; `$12.98`; empty without a price.
    var priceText: String {
        guard let price = card.price else { return "" }
        guard let previous = previousPrice else { return price.label }
        let sign = (percent ?? 0) > 0 ? "+" : ""
        return "\(price.label), was \(Money.format(previous, currency: price.currency))" + (percent.map { " (\(sign)\($0)%)" } ?? "")
    }

    var changeText: String {
        switch change {
        case .new: "New"
        case .priceDrop: "Price drop"
        case .priceRise: "Price rise"
        case .removed: "Removed"
        case .alert: condition.map { $0.prefix(1).uppercased() + $0.dropFirst() } ?? "Alert"
        }
    }
}
