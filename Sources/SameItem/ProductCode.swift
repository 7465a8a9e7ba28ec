import FeedCore
import Foundation

/// What identifies a product across shops: a GTIN (EAN/UPC) whose check digit holds, or a
/// brand with its manufacturer part number; and the variant words of its title (colour,
/// size, capacity), which keep apart two products that share an identifier across their
/// variants, as many shops' feeds do.
public enum ProductCode {
    /// The card's GTIN as 14 digits (GTIN-8/12/13/14 with a valid check digit), from its
    /// `details` (`gtin`, `gtin8`…`gtin14`, `ean`, `upc`).
    public static func gtin(of card: Card) -> String? {
        codes(in: card.details).gtin
    }

    /// Where a card's details may hold its GTIN, the most specific first.
    static let gtinKeys = ["gtin", "gtin14", "gtin13", "gtin12", "gtin8", "ean", "upc"]

    /// A card's GTIN (``gtin(of:)``) and brand and part number (``brandPart(of:)``), read in
    /// one walk of its few details: most cards have none of these keys, and a lookup of
    /// each of nine keys hashed all of them for every card of a run.
    static func codes(in details: [String: JSONValue]) -> (gtin: String?, brandPart: String?) {
        guard !details.isEmpty else { return (nil, nil) }
        var found: [(rank: Int, text: String)] = []
        var (brand, part): (JSONValue?, JSONValue?) = (nil, nil)
        for (key, value) in details {
            switch key {
            case "brand": brand = value
            case "mpn": part = value
            default:
                if let rank = gtinKeys.firstIndex(of: key), let text = text(value) { found.append((rank, text)) }
            }
        }
        let gtin = found.sorted { $0.rank < $1.rank }.lazy.compactMap { Self.gtin($0.text) }.first
        return (gtin, brand.flatMap { brandPart(brand: $0, part: part) })
    }

    /// `text` as a GTIN-14 when it is a GTIN-8, -12, -13 or -14 whose check digit holds.
    public static func gtin(_ text: String) -> String? {
        let digits = text.filter { !$0.isWhitespace && $0 != "-" }
        guard [8, 12, 13, 14].contains(digits.count), digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        let padded = String(repeating: "0", count: 14 - digits.count) + digits
        let values = padded.compactMap(\.wholeNumberValue)
        // Weights 3 and 1 from the right, the check digit last.
        let sum = values.dropLast().reversed().enumerated().reduce(0) { $0 + $1.element * ($1.offset % 2 == 0 ? 3 : 1) }
        guard (10 - sum % 10) % 10 == values.last, values.contains(where: { $0 != 0 }) else { return nil }
        return padded
    }

    /// `brand/MPN`, both without case, spaces or dashes, from `details` (`brand`, `mpn`).
    public static func brandPart(of card: Card) -> String? {
        codes(in: card.details).brandPart
    }

    private static func brandPart(brand: JSONValue?, part: JSONValue?) -> String? {
        guard let brand = text(brand).map(squeezed), !brand.isEmpty,
              let part = text(part).map(squeezed), part.count >= 3 else { return nil }
        return brand + "/" + part
    }

    private static func squeezed(_ text: String) -> String {
        String(text.lowercased().filter { $0.isLetter || $0.isNumber })
    }

    private static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: text
        case .number(let number)?: "\(number)"
        case .object(let object)?: text(object["name"])
        default: nil
        }
    }

    /// Words that name a variant: colours, clothing sizes, and amounts with a unit
    /// (`128gb`, `1.5l`, `65"`, `55 inch` read as `55inch`).
    public static func variants(in words: [String]) -> Set<String> {
        var found = Set<String>()
        for (index, word) in words.enumerated() {
            if colours.contains(word) || sizes.contains(word) { found.insert(word) }
            if let unit = units.first(where: { word.hasSuffix($0) && word.dropLast($0.count).allSatisfy { $0.isNumber || $0 == "." } && word.count > $0.count }) {
                found.insert(word.replacingOccurrences(of: unit, with: unitNames[unit] ?? unit))
            } else if word.allSatisfy({ $0.isNumber || $0 == "." }), index + 1 < words.count, let unit = unitNames[words[index + 1]] {
                found.insert(word + unit)
            }
        }
        return found
    }

    static let colours: Set<String> = [
        "black", "white", "silver", "grey", "gray", "red", "blue", "green", "gold", "rose", "pink", "purple", "yellow",
        "orange", "brown", "beige", "navy", "graphite", "midnight", "starlight", "titanium", "bronze", "copper", "cream",
        "ivory", "teal", "turquoise", "charcoal", "anthracite", "white/black", "space",
    ]
    static let sizes: Set<String> = ["xxs", "xs", "xl", "xxl", "xxxl", "2xl", "3xl", "4xl"]
    static let units = ["gb", "tb", "mb", "ml", "kg", "mah", "inch", "in", "cm", "mm", "w", "l", "g", "\""]
    static let unitNames: [String: String] = [
        "gb": "gb", "tb": "tb", "mb": "mb", "ml": "ml", "kg": "kg", "mah": "mah", "inch": "in", "inches": "in", "in": "in",
        "\"": "in", "cm": "cm", "mm": "mm", "w": "w", "watt": "w", "watts": "w", "l": "l", "litre": "l", "liter": "l", "g": "g",
    ]
}
