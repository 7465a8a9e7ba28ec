import FeedCore
import Foundation

/// What sources need to turn an upstream's price into a ``Price``: minor units, currency
/// symbols, percentages off.
extension Money {
    static let codesBySymbol = ["€": "EUR", "$": "USD", "£": "GBP", "¥": "JPY"]

    /// `Decimal` from integer minor units: `22999` cents → `229.99`.
    public static func fromMinorUnits(_ units: Int, scale: Int = 2) -> Decimal {
        Decimal(sign: units < 0 ? .minus : .plus, exponent: -scale, significand: Decimal(units.magnitude))
    }

    /// The ISO 4217 code for a currency symbol (`$` → `USD`), or `nil` when unknown.
    public static func currencyCode(forSymbol symbol: String) -> String? {
        codesBySymbol[symbol] ?? codesBySymbol[symbol.trimmingCharacters(in: .whitespaces)]
    }

    /// Whole-percent reduction from `regular` to `now`: 229.99 → 199.99 is 13.
    /// The same from whole minor units (cents), in integers: `Decimal` division costs
    /// microseconds, and a large deal list has thousands.
    public static func percentOff(regularMinor regular: Int, nowMinor now: Int) -> Int? {
        guard regular > 0, now < regular else { return nil }
        let (difference, overflow1) = regular.subtractingReportingOverflow(now)
        let (scaled, overflow2) = difference.multipliedReportingOverflow(by: 200)
        let (rounding, overflow3) = scaled.addingReportingOverflow(regular)
        guard !overflow1, !overflow2, !overflow3 else {
            return percentOff(regular: fromMinorUnits(regular), now: fromMinorUnits(now))
        }
        // round(difference × 100 / regular), halves away from zero (the value is positive).
        return rounding / (2 * regular)
    }

    public static func percentOff(regular: Decimal, now: Decimal) -> Int? {
        guard regular > 0, now < regular else { return nil }
        let percent = rounded((regular - now) / regular * 100, scale: 0)
        return NSDecimalNumber(decimal: percent).intValue
    }
}
