import FeedCore
import FeedSupport
import Foundation
import HTMLQuery

/// Cards from a page by selectors: one per element `item` finds, each field the first
/// value its query finds under it. An item without a title is skipped and said; a page
/// where `item` finds nothing is a failure that says what the page has instead.
struct PageCards {
    let sourceID: String
    let options: WebPageOptions

    func cards(on page: HTMLPage, root: HTMLNode, item: HTMLQuery) throws -> (cards: [Card], skipped: [SkippedRecord]) {
        let items = try Self.answer { try root.select(item) }
        guard !items.isEmpty else {
            throw SourceError.failed("`\(item)` matched nothing; \(Self.census(item, under: root))")
        }
        var cards: [Card] = []
        var skipped: [SkippedRecord] = []
        var seen = Set<String>()
        for (index, node) in items.enumerated() {
            let place = "\(item)[\(index)]"
            switch try card(node, on: page) {
            case .success(let card):
                if seen.insert(card.id).inserted { cards.append(card) } else { skipped.append(SkippedRecord(path: place, reason: "the same id as an earlier item (\(card.upstreamID))")) }
            case .failure(let reason):
                skipped.append(SkippedRecord(path: place, reason: reason.message))
            }
        }
        return (cards, skipped)
    }

    struct Skip: Error {
        var message: String
    }

    private func card(_ node: HTMLNode, on page: HTMLPage) throws -> Result<Card, Skip> {
        func value(_ field: WebPageOptions.Field) throws -> String? {
            guard let query = options.fields[field] else { return nil }
            return try Self.answer { try query.first(under: node) }
        }
        guard let title = try value(.title) else {
            return .failure(Skip(message: "`\(options.fields[.title]?.text ?? "title")` found no title in this item"))
        }
        let url = StructuredData.link(try value(.link), base: page.url)
        let priceText = try value(.price)
        let price = priceText.flatMap { PriceText.parse($0, currency: options.currency) }
        if let priceText, price == nil {
            return .failure(Skip(message: "the price \"\(String(priceText.prefix(40)))\" holds no number"))
        }
        var published: Date?
        if let text = try value(.date) {
            published = options.dateFormat.map { Self.date(text, format: $0) } ?? FeedDates.date(text)
            if published == nil {
                return .failure(Skip(message: "the date \"\(String(text.prefix(40)))\" is neither RFC 3339 nor RFC 2822"
                    + (options.dateFormat.map { " nor \($0)" } ?? "") + " (set date_format: \"%d.%m.%Y\")"))
            }
        }
        var details: [String: JSONValue] = [:]
        if let query = options.fields[.content], let body = try Self.answer({ try node.select(query) }).first {
            let content = HTMLSanitizer.clean(query.attribute.flatMap { body.attribute($0) } ?? body.innerHTML, base: page.url)
            if !content.isEmpty { details["content"] = .string(content) }
        }
        let id = try value(.id) ?? url?.absoluteString ?? StructuredData.hash(title, url)
        return .success(Card(source: sourceID, upstreamID: id, kind: options.kind ?? (price != nil ? .product : .post), title: title,
                             summary: try value(.summary), price: price, image: StructuredData.link(try value(.image), base: page.url), url: url,
                             author: try value(.author).map { Card.Author(name: $0) }, published: published, tags: options.tags,
                             details: details))
    }

    /// A query's answer; one that spends too much work fails the page, saying which.
    static func answer<Value>(_ body: () throws -> Value) throws -> Value {
        do {
            return try body()
        } catch let failure as HTMLQuery.Failure {
            throw SourceError.failed(failure.description)
        }
    }

    /// What the page has of the element `item` looks for: "the page has 0 `article`
    /// elements", so a user sees whether the type or the class is wrong.
    static func census(_ item: HTMLQuery, under root: HTMLNode) -> String {
        let last = item.text.split(whereSeparator: { " >+~".contains($0) }).last.map(String.init) ?? ""
        let type = String(last.prefix { $0.isLetter || $0.isNumber })
        guard !type.isEmpty, !item.text.hasPrefix("xpath:"), let query = try? HTMLQuery(type.lowercased()),
              let count = try? root.select(query).count else {
            return "check the selector against the page's source (not the inspector's live page)"
        }
        return "the page has \(count) `\(type.lowercased())` element\(count == 1 ? "" : "s")"
    }

    /// `text` read with a `strptime`-style format, in UTC: `%d` `%e` `%m` `%Y` `%y` `%H`
    /// `%M` `%S` `%b`/`%B` (English month names), `%%`; a space matches any run of white
    /// space, anything else itself.
    static func date(_ text: String, format: String) -> Date? {
        let input = Array(text.trimmingCharacters(in: .whitespacesAndNewlines)), pattern = Array(format)
        var (index, at) = (0, 0)
        var parts = (year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0)
        func number(_ most: Int) -> Int? {
            let start = index
            while index < input.count, index - start < most, input[index].isASCII, input[index].isNumber { index += 1 }
            return index > start ? Int(String(input[start..<index])) : nil
        }
        while at < pattern.count {
            let character = pattern[at]
            at += 1
            if character.isWhitespace {
                while index < input.count, input[index].isWhitespace { index += 1 }
                continue
            }
            guard character == "%", at < pattern.count else {
                guard index < input.count, input[index] == character else { return nil }
                index += 1
                continue
            }
            let directive = pattern[at]
            at += 1
            switch directive {
            case "d", "e":
                while directive == "e", index < input.count, input[index] == " " { index += 1 }
                guard let day = number(2) else { return nil }
                parts.day = day
            case "m": guard let month = number(2) else { return nil }; parts.month = month
            case "Y": guard let year = number(4) else { return nil }; parts.year = year
            case "y": guard let year = number(2) else { return nil }; parts.year = year < 70 ? 2000 + year : 1900 + year
            case "H": guard let hour = number(2) else { return nil }; parts.hour = hour
            case "M": guard let minute = number(2) else { return nil }; parts.minute = minute
            case "S": guard let second = number(2) else { return nil }; parts.second = second
            case "b", "B":
                let start = index
                while index < input.count, input[index].isLetter { index += 1 }
                let name = String(input[start..<index]).lowercased()
                guard name.count >= 3, let month = Self.months.firstIndex(where: { $0.hasPrefix(name.prefix(3)) && (name.count == 3 || $0 == name) }) else { return nil }
                parts.month = month + 1
            case "%":
                guard index < input.count, input[index] == "%" else { return nil }
                index += 1
            default:
                return nil
            }
        }
        guard index == input.count, (1...12).contains(parts.month), (1...31).contains(parts.day), parts.hour < 24, parts.minute < 60, parts.second < 61 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let components = DateComponents(year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute, second: parts.second)
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == parts.day else { return nil }
        return date
    }

    static let months = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
}
