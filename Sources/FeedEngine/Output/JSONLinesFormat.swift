import FeedCore

/// One compact JSON object per line, sorted keys (the default when piped).
public struct JSONLinesFormat: CardFormat {
    public static let name = "jsonl"
    public static let mediaType = "application/jsonl; charset=utf-8"
    public static let summary = "one JSON object per line (default when piped)"

    public init() {}

    public func write(_ document: FeedDocument, to out: inout FormattedOutput) {
        for card in document.cards {
            out.append { bytes in
                JSONLines.append(card, to: &bytes)
                bytes.append(UInt8(ascii: "\n"))
            }
        }
    }
}
