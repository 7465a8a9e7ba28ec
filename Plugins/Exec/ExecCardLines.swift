import FeedCore
import FeedSupport
import Foundation

/// The program's stdout: one card per line in the card format of docs/cards.md (`id` is the
/// upstream id; the engine prefixes the source id and sets `source` and `v`), and
/// optionally a last line `{"next": "CURSOR"}`.
enum ExecCardLines {
    /// The page read from `output`; a line that is not a valid card is skipped naming its
    /// line number.
    static func page(_ output: Data, sourceID: String, json: any JSONBodyReader) -> SourcePage {
        var cards: [Card] = []
        var skipped: [SkippedRecord] = []
        var next: String?
        let text = String(decoding: output, as: UTF8.self)
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = line.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !line.isEmpty else { continue }
            let where_ = "line \(index + 1)"
            switch parse(line, sourceID: sourceID, json: json) {
            case .card(let card): cards.append(card)
            case .next(let cursor): next = cursor
            case .invalid(let reason): skipped.append(SkippedRecord(path: where_, reason: reason))
            }
        }
        return SourcePage(cards: cards, next: next, skipped: skipped)
    }

    enum Line: Equatable {
        case card(Card)
        case next(String?)
        case invalid(String)
    }

    static func parse(_ line: String, sourceID: String, json: any JSONBodyReader) -> Line {
        guard case .object(var fields)? = try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)) else {
            return .invalid("not a JSON object")
        }
        if fields.keys.count == 1, let next = fields["next"] {
            switch next {
            case .string(let cursor): return .next(cursor.isEmpty ? nil : cursor)
            case .number(let number): return .next("\(number)")
            case .null: return .next(nil)
            default: return .invalid("\"next\" must be text, got \(next.kindDescription)")
            }
        }
        let upstreamID: String
        switch fields["id"] {
        case .string(let id)? where !id.isEmpty: upstreamID = id
        case .number(let id)?: upstreamID = "\(id)"
        case nil: return .invalid("no \"id\"")
        case let other?: return .invalid("\"id\" must be text or a number, got \(other.kindDescription)")
        }
        guard case .string(let title)? = fields["title"], !title.trimmingCharacters(in: .whitespaces).isEmpty else {
            return .invalid("no \"title\" (every card needs one)")
        }
        for key in ["image", "url"] {
            if case .string(let text)? = fields[key], ConfigMapReader.httpURL(text) == nil {
                return .invalid("\"\(key)\" is not an absolute http(s) URL: \(text)")
            }
        }
        fields["id"] = .string("\(sourceID):\(upstreamID)")
        fields["source"] = .string(sourceID)
        fields["kind"] = fields["kind"] ?? "item"
        fields["v"] = nil
        fields["origin"] = nil
        do {
            let data = try JSONEncoder().encode(JSONValue.object(fields))
            var card = try json.decode(Card.self, from: data)
            card.title = title
            if let currency = card.price?.currency, !(currency.count == 3 && currency.allSatisfy { $0.isASCII && $0.isUppercase }) {
                return .invalid("price.currency must be an ISO 4217 code such as EUR, got \"\(currency)\"")
            }
            return .card(card)
        } catch let SourceError.undecodable(path, reason) {
            return .invalid(path.isEmpty ? reason : "\(path): \(reason)")
        } catch {
            return .invalid("\(error)")
        }
    }
}
