import FeedCore
import Foundation

/// How cards are printed on stdout.
public enum OutputFormat: String, Sendable, CaseIterable {
    /// One compact JSON object per line, sorted keys (the default when piped).
    case jsonl
    /// Aligned columns for a person (the default on a terminal).
    case text
    /// RFC 4180 CSV with a header row.
    case csv
    /// Tab-separated values with a header row.
    case tsv
}

/// Renders cards in one ``OutputFormat``.
public struct CardWriter: Sendable {
    public var format: OutputFormat
    /// Terminal width to fit text output to; `nil` = no limit.
    public var width: Int?
    /// ANSI colour in text output.
    public var color: Bool

    public init(format: OutputFormat, width: Int? = nil, color: Bool = false) {
        self.format = format
        self.width = width
        self.color = color
    }

    /// The whole output for `cards`, each line ending in a newline (CRLF for CSV).
    public func render(_ cards: [Card]) -> String {
        switch format {
        case .jsonl: cards.map(JSONLines.line(for:)).map { $0 + "\n" }.joined()
        case .text: TextTable(width: width, color: color).render(cards)
        case .csv: DelimitedTable.csv(header: DelimitedTable.cardHeader, rows: cards.map(DelimitedTable.row))
        case .tsv: DelimitedTable.tsv(header: DelimitedTable.cardHeader, rows: cards.map(DelimitedTable.row))
        }
    }
}

/// Cards as JSON Lines: sorted keys, unescaped slashes, exact decimals, UTF-8.
public enum JSONLines {
    public static func line(for card: Card) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a Card cannot fail: every field is a string, number, bool or URL.
        let data = (try? encoder.encode(card)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

/// Rows as CSV or TSV with a header row: cards, and the other tables commands print.
public enum DelimitedTable {
    /// The card columns shared by CSV and TSV.
    static let cardHeader = [
        "id", "source", "kind", "title", "summary", "price", "currency", "regular_price", "url", "image",
        "author", "published", "tags", "origin",
    ]

    static func row(_ card: Card) -> [String] {
        [
            card.id, card.source, card.kind.rawValue, card.title, card.summary ?? "",
            card.price.map { "\($0.amount)" } ?? "", card.price?.currency ?? "",
            card.price?.regular.map { "\($0)" } ?? "", card.url?.absoluteString ?? "",
            card.image?.absoluteString ?? "", card.author?.name ?? "",
            card.published.map(RFC3339.string(from:)) ?? "", card.tags.joined(separator: "; "),
            card.origin?.rawValue ?? "",
        ]
    }

    /// RFC 4180: CRLF line ends; fields with a comma, quote or line break are quoted.
    public static func csv(header: [String], rows: [[String]]) -> String {
        func field(_ text: String) -> String {
            guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
            return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return ([header] + rows).map { $0.map(field).joined(separator: ",") + "\r\n" }.joined()
    }

    /// Tabs and line breaks inside fields become spaces: TSV has no quoting.
    public static func tsv(header: [String], rows: [[String]]) -> String {
        func field(_ text: String) -> String {
            String(text.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 })
        }
        return ([header] + rows).map { $0.map(field).joined(separator: "\t") + "\n" }.joined()
    }
}
