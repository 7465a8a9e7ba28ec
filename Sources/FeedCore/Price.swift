import Foundation

/// An exact price. Amounts are `Decimal`, never floating point, so `7.5` stays `7.5`.
public struct Price: Sendable, Hashable, Codable {
    /// What the item costs now (for a range, the lowest price).
    public var amount: Decimal
    /// ISO 4217 code (`EUR`, `USD`, `GBP`); `nil` when the upstream's currency is unknown.
    public var currency: String?
    /// The upstream's own rendering of the price, when it has one.
    public var display: String?
    /// The price before a sale or discount.
    public var regular: Decimal?
    /// Bounds of a price range (`{from, to}` upstream).
    public var min: Decimal?
    public var max: Decimal?

    public init(
        amount: Decimal, currency: String?, display: String? = nil,
        regular: Decimal? = nil, min: Decimal? = nil, max: Decimal? = nil
    ) {
        self.amount = amount
        self.currency = currency
        self.display = display
        self.regular = regular
        self.min = min
        self.max = max
    }

    /// The display string if the upstream gave one, else a formatted amount.
    public var label: String {
        display ?? Money.format(amount, currency: currency)
    }
}

/// Exact money arithmetic and formatting helpers shared by every source.
public enum Money {
    private static let symbols = ["EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥"]

    /// Parses a plain decimal string such as `"660.00"` (surrounding spaces allowed); `nil`
    /// for anything else, including text Foundation would read only the start of (`1.2.3`, `-`).
    public static func parse(_ text: String) -> Decimal? {
        if let value = Decimal(plainText: text) { return value }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        return trimmed.utf8.count == text.utf8.count ? nil : Decimal(plainText: trimmed)
    }

    /// Rounds to `scale` fraction digits, half away from zero.
    public static func rounded(_ value: Decimal, scale: Int = 2) -> Decimal {
        var input = value
        var result = Decimal()
        NSDecimalRound(&result, &input, scale, .plain)
        return result
    }

    /// `€19.00`, `$229.99`, `£660.00`; unknown currencies as `CHF 5.00`.
    public static func format(_ amount: Decimal, currency: String?) -> String {
        let number = fixed(amount)
        guard let currency else { return number }
        if let symbol = symbols[currency] { return amount < 0 ? "-\(symbol)\(fixed(-amount))" : "\(symbol)\(number)" }
        return "\(currency) \(number)"
    }

    /// The amount with exactly two fraction digits: `7.5` → `"7.50"`.
    public static func fixed(_ amount: Decimal, scale: Int = 2) -> String {
        let text = "\(rounded(amount, scale: scale))"
        guard scale > 0 else { return text }
        let parts = text.split(separator: ".", maxSplits: 1)
        let fraction = parts.count > 1 ? String(parts[1]) : ""
        return "\(parts[0]).\(fraction.padding(toLength: scale, withPad: "0", startingAt: 0))"
    }
}

extension Decimal {
    /// Exact text of the form `-12.50` (optional minus, digits, at most one `.`, at least
    /// one digit); `nil` for anything else. The separator is always `.`: no `Locale` is
    /// consulted, because asking one for its separator loads ICU's locale data (3.5 MB
    /// resident in a large run, measured) and Foundation would also accept a valid prefix
    /// (`1.2.3` as 1.2).
    public init?(plainText text: String) {
        var digits = 0, points = 0
        for (offset, byte) in text.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "."): points += 1
            case UInt8(ascii: "-") where offset == 0: continue
            default: return nil
            }
        }
        guard digits > 0, points <= 1, let value = Decimal(string: text) else { return nil }
        self = value
    }
}
