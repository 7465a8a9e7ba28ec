import FeedCore
import Foundation

/// A price as a page shows it — `£1,299.00`, `1.299,00 €`, `EUR 12,50`, `$5`, `1 299 kr` —
/// as an exact amount and a currency: the symbol it carries, else an ISO 4217 code written
/// beside it, else the source's `currency:` ("NEW £5" is pounds: a shouting word is no
/// code). The decimal separator is told from the digits: the last of `.` and `,` when both
/// appear, else one followed by exactly three digits groups thousands.
enum PriceText {
    static let symbols: [(String, String)] = [("US$", "USD"), ("£", "GBP"), ("€", "EUR"), ("$", "USD"), ("¥", "JPY"), ("₹", "INR"), ("₩", "KRW")]

    static func parse(_ text: String, currency fallback: String?) -> Price? {
        guard let amount = amount(in: text) else { return nil }
        return Price(amount: amount, currency: currency(in: text) ?? fallback, display: text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The symbol in `text`, else the first word that is an ISO 4217 code.
    static func currency(in text: String) -> String? {
        if let symbol = symbols.first(where: { text.contains($0.0) }) { return symbol.1 }
        return text.split { !$0.isLetter }.lazy.map(String.init).first { isoCodes.contains($0) }
    }

    /// The codes ISO 4217 lists today, as Foundation knows them.
    static let isoCodes = Set(Locale.Currency.isoCurrencies.map(\.identifier))

    /// The first number in `text`, its separators read as above.
    static func amount(in text: String) -> Decimal? {
        let characters = Array(text)
        guard let start = characters.firstIndex(where: \.isNumber) else { return nil }
        var end = start
        let joiners: Set<Character> = [".", ",", " ", "'", "\u{00A0}", "\u{202F}", "’"]
        while end < characters.count, characters[end].isNumber || (joiners.contains(characters[end]) && end + 1 < characters.count && characters[end + 1].isNumber) {
            end += 1
        }
        let run = characters[start..<end].filter { $0 != " " && $0 != "'" && $0 != "\u{00A0}" && $0 != "\u{202F}" && $0 != "’" }
        let lastDot = run.lastIndex(of: "."), lastComma = run.lastIndex(of: ",")
        let decimal: Character?
        switch (lastDot, lastComma) {
        case let (dot?, comma?): decimal = dot > comma ? "." : ","
        case let (dot?, nil): decimal = Self.isDecimal(run, at: dot) ? "." : nil
        case let (nil, comma?): decimal = Self.isDecimal(run, at: comma) ? "," : nil
        default: decimal = nil
        }
        var plain = ""
        for (index, character) in run.enumerated() {
            if character.isNumber, let digit = character.wholeNumberValue {
                plain += String(digit)
            } else if character == decimal, index == run.lastIndex(of: character) {
                plain += "."
            }
        }
        return Decimal(plainText: plain)
    }

    /// A lone separator is the decimal one unless exactly three digits follow it (and it
    /// is the only one of its kind).
    private static func isDecimal(_ run: [Character], at index: Int) -> Bool {
        let after = run.count - index - 1
        let count = run.filter { $0 == run[index] }.count
        return count == 1 && after != 3
    }
}
