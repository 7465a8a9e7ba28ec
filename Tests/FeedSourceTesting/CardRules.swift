import FeedCore
import FeedSupport
import Foundation

/// The invariants every card keeps, whatever its source: what the README promises
/// about the output format.
public enum CardRules {
    /// Every broken rule of `card`, in words; empty when it keeps them all.
    public static func problems(_ card: Card, source: String) -> [String] {
        var problems: [String] = []
        if !card.id.hasPrefix("\(source):") || card.upstreamID.isEmpty {
            problems.append("id is not \"\(source):<upstream id>\"")
        }
        if card.source != source { problems.append("source is \"\(card.source)\", expected \"\(source)\"") }
        if card.title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { problems.append("empty title") }
        let urls = [("image", card.image), ("url", card.url), ("author.image", card.author?.image),
                     ("author.url", card.author?.url)]
        for case let (name, url?) in urls where !isAbsoluteHTTP(url) {
            problems.append("\(name) is not an absolute http(s) URL: \(url.absoluteString)")
        }
        if let price = card.price { problems += priceProblems(price) }
        if let published = card.published, let encoded = encodedPublished(card), !encoded.hasSuffix("Z") {
            problems.append("published \(published) is not written in UTC: \(encoded)")
        }
        return problems
    }

    static func isAbsoluteHTTP(_ url: URL) -> Bool {
        ["http", "https"].contains(url.scheme?.lowercased() ?? "") && !(url.host ?? "").isEmpty
    }

    static func priceProblems(_ price: Price) -> [String] {
        var problems: [String] = []
        if let currency = price.currency, !Locale.commonISOCurrencyCodes.contains(currency) {
            problems.append("currency \"\(currency)\" is not an ISO 4217 code")
        }
        for (name, amount) in [("amount", Optional(price.amount)), ("regular", price.regular), ("min", price.min), ("max", price.max)] {
            guard let amount else { continue }
            let digits = "\(amount)".split(separator: ".").dropFirst().first?.count ?? 0
            if digits > 4 { problems.append("price \(name) \(amount) is not an exact decimal") }
        }
        return problems
    }

    static func encodedPublished(_ card: Card) -> String? {
        card.published.map(RFC3339.string(from:))
    }
}

/// Bodies a hostile or broken upstream might send, made from a recorded one.
enum HostileJSON {
    /// The recorded body with the first record of every list given the wrong types:
    /// text becomes a number, numbers and booleans become text, objects become lists.
    static func wrongTypes(_ body: Data) -> Data? {
        guard let json = try? JSONDecoder().decode(JSONValue.self, from: body) else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try? encoder.encode(mangleFirstRecords(json))
    }

    static func mangleFirstRecords(_ value: JSONValue) -> JSONValue {
        switch value {
        case .array(var items):
            items = items.map(mangleFirstRecords)
            if case .object(let record)? = items.first { items[0] = .object(record.mapValues(wrongType)) }
            return .array(items)
        case .object(let object):
            return .object(object.mapValues(mangleFirstRecords))
        default:
            return value
        }
    }

    static func wrongType(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string: .number(7)
        case .number, .bool: .string("seven")
        case .object: .array([])
        case .array: .string("seven")
        case .null: .number(7)
        }
    }
}
