import FeedCore

/// Aligned columns for a person (the default on a terminal).
public struct TextFormat: CardFormat {
    public static let name = "text"
    public static let mediaType = "text/plain; charset=utf-8"
    public static let summary = "aligned columns for a person (default on a terminal)"

    public init() {}

    public func write(_ document: FeedDocument, to out: inout FormattedOutput) {
        out.write(TextTable(width: document.width, color: document.color, showsDates: document.showsDates).render(document.cards))
    }
}
