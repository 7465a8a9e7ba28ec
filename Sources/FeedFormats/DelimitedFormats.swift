import FeedCore
import FeedSupport
import Foundation

/// RFC 4180 CSV with a header row (CRLF line ends).
public struct CSVFormat: CardFormat {
    public static let name = "csv"
    public static let mediaType = "text/csv; charset=utf-8; header=present"
    public static let summary = "RFC 4180 CSV with a header row"

    public init() {}

    public func write(_ document: FeedDocument, to out: inout FormattedOutput) {
        out.write(DelimitedTable.csv(header: DelimitedTable.cardHeader, rows: []))
        for card in document.cards {
            out.write(DelimitedTable.csvLine(DelimitedTable.row(card)))
        }
    }
}

/// Tab-separated values with a header row.
public struct TSVFormat: CardFormat {
    public static let name = "tsv"
    public static let mediaType = "text/tab-separated-values; charset=utf-8"
    public static let summary = "tab-separated values with a header row"

    public init() {}

    public func write(_ document: FeedDocument, to out: inout FormattedOutput) {
        out.write(DelimitedTable.tsv(header: DelimitedTable.cardHeader, rows: []))
        for card in document.cards {
            out.write(DelimitedTable.tsvLine(DelimitedTable.row(card)))
        }
    }
}

/// Rows as CSV or TSV with a header row: cards, and the other tables commands print.
public enum DelimitedTable {
    /// The card columns shared by CSV and TSV.
    static let cardHeader = [
        "id", "source", "kind", "title", "summary", "price", "currency", "regular_price", "url", "image",
        "author", "published", "tags", "origin",
    ]

    /// A card's cells, each neutralised for spreadsheets (``cell(_:)``).
    static func row(_ card: Card) -> [String] {
        cells(card).map(cell)
    }

    /// A cell that a spreadsheet would run as a formula (it starts with `=`, `+`, `-`, `@`,
    /// a tab or a carriage return) gets a leading `'`, as OWASP recommends against CSV
    /// injection: upstream text like `=HYPERLINK(…)` is shown, never evaluated. A plain
    /// number (`-5.5`) is left as it is: it cannot be a formula.
    static func cell(_ text: String) -> String {
        guard let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return text }
        if Decimal(plainText: text) != nil { return text }
        return "'" + text
    }

    private static func cells(_ card: Card) -> [String] {
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
        ([header] + rows).map(csvLine).joined()
    }

    static func csvLine(_ fields: [String]) -> String {
        func field(_ text: String) -> String {
            guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
            return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return fields.map(field).joined(separator: ",") + "\r\n"
    }

    /// Tabs and line breaks inside fields become spaces: TSV has no quoting.
    public static func tsv(header: [String], rows: [[String]]) -> String {
        ([header] + rows).map(tsvLine).joined()
    }

    static func tsvLine(_ fields: [String]) -> String {
        fields.map { String($0.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 }) }.joined(separator: "\t") + "\n"
    }
}
