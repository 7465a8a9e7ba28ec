import Foundation

/// Price amounts as whole millionths, so the sort's hot loop (and the card store's price
/// index) compares integers instead of `Decimal`s. Every real price is such an amount;
/// when one is not, the sort compares the exact decimals instead.
public enum PriceMicros {
    public static func all(_ amounts: [Decimal?]) -> [Int64?]? {
        var micros: [Int64?] = []
        micros.reserveCapacity(amounts.count)
        for amount in amounts {
            guard let amount else { micros.append(nil); continue }
            guard let value = self.micros(amount) else { return nil }
            micros.append(value)
        }
        return micros
    }

    /// `amount × 1,000,000` when that is a whole number that fits in 64 bits.
    public static func micros(_ amount: Decimal) -> Int64? {
        let scaled = amount * 1_000_000
        // Out of range, int64Value answers something else: the check below catches it.
        let whole = NSDecimalNumber(decimal: scaled).int64Value
        return Decimal(whole) == scaled ? whole : nil
    }
}
