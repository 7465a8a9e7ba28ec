import FeedCore
import FeedSupport
import Foundation

/// One card as a readable block for `aggregate show` on a terminal: the title, a line of
/// what it is, then every field and detail, nested details indented and long text wrapped.
public enum CardDetailText {
    public static func render(_ card: Card, width: Int? = nil) -> String {
        let wrap = max(40, width ?? 100)
        var lines = [card.title]
        var facts = [card.source, card.kind.rawValue]
        if let price = card.price {
            var text = price.label
            if let regular = price.regular, regular != price.amount { text += " (was \(Money.format(regular, currency: price.currency)))" }
            facts.append(text)
        }
        if let origin = card.origin { facts.append("[\(origin.rawValue)]") }
        lines.append(facts.joined(separator: " · "))
        lines.append("")
        func field(_ name: String, _ value: String?) {
            guard let value, !value.isEmpty else { return }
            lines += wrapped("\(name): \(value)", width: wrap, indent: "  ")
        }
        field("id", card.id)
        field("url", card.url?.absoluteString)
        field("image", card.image?.absoluteString)
        field("by", card.author.map { author in author.url.map { "\(author.name) <\($0.absoluteString)>" } ?? author.name })
        field("published", card.published.map(RFC3339.string(from:)))
        field("tags", card.tags.isEmpty ? nil : card.tags.joined(separator: ", "))
        // A post's content as text (its summary is a cut of it), links as footnotes.
        if case .string(let html)? = card.details["content"] {
            let readable = HTMLSanitizer.readable(html)
            for paragraph in readable.paragraphs {
                lines.append("")
                lines += wrapped(paragraph, width: wrap, indent: paragraph.hasPrefix(" ") || paragraph.hasPrefix("•") ? "  " : "")
            }
            if !readable.links.isEmpty {
                lines.append("")
                for (number, link) in readable.links.enumerated() { lines.append("[\(number + 1)] \(link)") }
            }
        } else if let summary = card.summary {
            lines.append("")
            lines += wrapped(summary, width: wrap, indent: "")
        }
        if card.details.keys.contains(where: { $0 != "content" }) {
            lines.append("")
            for key in card.details.keys.sorted() where key != "content" {
                // The key came from `details`, so the lookup cannot miss.
                let value = card.details[key] ?? .null
                // A detail that is the summary (a detail endpoint's full description,
                // made the summary) is printed once, above.
                if let summary = card.summary, value.stringValue == summary { continue }
                describe(value, name: key, depth: 0, width: wrap, into: &lines)
            }
        }
        // Every line from upstream data, made safe for the terminal.
        return lines.map(TerminalText.safe).joined(separator: "\n") + "\n"
    }

    private static func describe(_ value: JSONValue, name: String, depth: Int, width: Int, into lines: inout [String]) {
        let indent = String(repeating: "  ", count: depth)
        switch value {
        case .object(let members):
            lines.append("\(indent)\(name):")
            for key in members.keys.sorted() {
                describe(members[key] ?? .null, name: key, depth: depth + 1, width: width, into: &lines)
            }
        case .array(let elements) where elements.contains(where: { if case .object = $0 { true } else { false } }):
            lines.append("\(indent)\(name):")
            for (index, element) in elements.enumerated() {
                describe(element, name: "\(index + 1)", depth: depth + 1, width: width, into: &lines)
            }
        case .array(let elements):
            lines += wrapped("\(indent)\(name): \(elements.map(scalarText).joined(separator: ", "))", width: width,
                             indent: indent + "  ")
        default:
            lines += wrapped("\(indent)\(name): \(scalarText(value))", width: width, indent: indent + "  ")
        }
    }

    private static func scalarText(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): text
        case .number(let number): DecimalText.string(number)
        case .bool(let flag): flag ? "yes" : "no"
        case .null: "–"
        case .array(let elements): elements.map(scalarText).joined(separator: ", ")
        case .object: "{…}"
        }
    }

    /// `text` broken at spaces into lines of at most `width` columns; lines after the
    /// first start with `indent`.
    static func wrapped(_ text: String, width: Int, indent: String) -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = lines.isEmpty ? "" : indent
            var lineHasWord = false
            for word in paragraph.split(separator: " ") {
                if lineHasWord && DisplayWidth.of(line) + 1 + DisplayWidth.of(String(word)) > width {
                    lines.append(line)
                    line = indent
                    lineHasWord = false
                }
                line += (lineHasWord ? " " : "") + word
                lineHasWord = true
            }
            lines.append(line)
        }
        return lines
    }
}
