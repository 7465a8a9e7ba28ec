import FeedCore
import FeedSupport

/// Cards as aligned columns for a person, in the order a person scans: source, title,
/// price, the marker of data that is not live (`[snapshot]`, `[cache]`: never cut, one
/// letter when the line is narrow), the id (long ones shortened: `ltk:c70ee07…0004`), then
/// tags with what room is left; ordered by date, each card's date first. Every line fits
/// the terminal width (or `COLUMNS`), down to 40 columns; the title keeps two fifths of it.
struct TextTable {
    var width: Int?
    var color: Bool
    /// A first column with each card's date (`2026-11-20`), for a list ordered by date.
    var showsDates = false

    private static let gap = "  "
    /// `2026-11-20`.
    private static let dateWidth = 10
    private static let minimumTitle = 10
    /// Ids longer than this are shortened (full ids: `--format jsonl`): short enough for
    /// an 80-column terminal to show one to pass to `show` and `mark`.
    private static let idLimit = 12
    /// Narrower terminals leave out the id column.
    private static let idColumnFrom = 80

    private struct Row {
        var source: String
        var title: String
        var price: String
        var marker: String
        var id: String
        var tags: String
        /// `also at: shop-b £649.00` or `also in: hn, lobsters` (merge: same-item).
        var also: String
    }

    /// Where else a merged card's item is: the shops with their prices, or the sources.
    static func also(_ card: Card) -> String {
        guard let also = card.also, !also.isEmpty else { return "" }
        guard also.contains(where: { $0.price != nil }) else { return "also in: " + also.map(\.source).joined(separator: ", ") }
        let currency = card.price?.currency
        let others = also.contains { $0.price != nil && $0.price?.currency != currency }
        return "also at: " + also.map { copy in copy.source + (copy.price.map { " " + $0.label } ?? "") }.joined(separator: ", ")
            + (others ? " (other currencies listed, not compared)" : "")
    }

    func render(_ cards: some Collection<Card>) -> String {
        guard !cards.isEmpty else { return "" }
        let rows = cards.map { card in
            Row(source: TerminalText.safe(card.source), title: TerminalText.safe(card.title).split(whereSeparator: \.isNewline).joined(separator: " "),
                price: TerminalText.safe(card.price?.label ?? ""), marker: card.origin.map { "[\($0.rawValue)]" } ?? "",
                id: TerminalText.safe(Self.shortID(card.upstreamID)), tags: TerminalText.safe(card.tags.joined(separator: ", ")),
                also: TerminalText.safe(Self.also(card)))
        }
        func widest(_ column: (Row) -> String) -> Int { rows.map { DisplayWidth.of(column($0)) }.max() ?? 0 }
        var sourceWidth = widest(\.source)
        let priceWidth = widest(\.price)
        var markerWidth = widest(\.marker)
        var compactMarkers = false
        var idWidth = width.map { $0 >= Self.idColumnFrom } ?? true ? widest(\.id) : 0
        var titleWidth = widest(\.title)
        let gaps = [priceWidth, markerWidth, idWidth].filter { $0 > 0 }.count * Self.gap.count + Self.gap.count
        let width = width.map { showsDates ? max(20, $0 - Self.dateWidth - Self.gap.count) : $0 }
        if let width {
            // Give way in this order: the title down to its minimum (two fifths of the
            // line, at least 10), then the source id, then the markers to one letter
            // (`[s]` for `[snapshot]`), then the id column.
            let minimumTitle = max(Self.minimumTitle, width * 2 / 5)
            let fixed = sourceWidth + priceWidth + markerWidth + idWidth + gaps
            titleWidth = min(titleWidth, max(minimumTitle, width - fixed))
            if fixed + titleWidth > width { sourceWidth = max(4, width - titleWidth - (fixed - sourceWidth)) }
            if markerWidth > 0, sourceWidth + titleWidth + priceWidth + markerWidth + idWidth + gaps > width {
                compactMarkers = true
                markerWidth = 3
            }
            if idWidth > 0, sourceWidth + titleWidth + priceWidth + markerWidth + idWidth + gaps > width { idWidth = 0 }
            // Room the markers gave up goes to the title, then back to the source id.
            titleWidth = max(titleWidth, min(widest(\.title), width - (sourceWidth + priceWidth + markerWidth + idWidth + gaps)))
            sourceWidth = max(sourceWidth, min(widest(\.source), width - (titleWidth + priceWidth + markerWidth + idWidth + gaps)))
        }
        let dates = cards.map { card in card.published.map { String(RFC3339.string(from: $0).prefix(10)) } ?? "" }
        return zip(rows, dates).map { row, date in
            var line = paint(pad(fit(row.source, sourceWidth), sourceWidth), "2") + Self.gap + pad(fit(row.title, titleWidth), titleWidth)
            if showsDates { line = paint(pad(date, Self.dateWidth), "2") + Self.gap + line }
            if priceWidth > 0 { line += Self.gap + paint(pad(row.price, priceWidth, right: true), "32") }
            if markerWidth > 0 {
                let marker = compactMarkers && !row.marker.isEmpty ? "[\(row.marker.dropFirst().prefix(1))]" : row.marker
                line += Self.gap + paint(pad(marker, markerWidth), "31")
            }
            if idWidth > 0 { line += Self.gap + paint(pad(row.id, idWidth), "2") }
            if !row.tags.isEmpty {
                let used = DisplayWidth.of(strip(line)) + Self.gap.count
                if let width {
                    // Only what fits, and only if something useful fits.
                    if width - used > 3 { line += Self.gap + paint(fit(row.tags, width - used), "33") }
                } else {
                    line += Self.gap + paint(row.tags, "33")
                }
            }
            var text = trimTrailing(line) + "\n"
            if !row.also.isEmpty {
                let indent = String(repeating: " ", count: (showsDates ? Self.dateWidth + Self.gap.count : 0) + sourceWidth + Self.gap.count)
                text += indent + paint(width.map { fit(row.also, max(10, $0 - indent.count)) } ?? row.also, "2") + "\n"
            }
            return text
        }.joined()
    }

    /// `3f2a3b4c-…-c91e` → `3f2a3b4c…c91e`: enough to tell cards apart at a glance.
    static func shortID(_ id: String) -> String {
        guard id.count > idLimit else { return id }
        return String(id.prefix(idLimit - 5)) + "…" + String(id.suffix(4))
    }

    private func fit(_ text: String, _ width: Int) -> String {
        guard DisplayWidth.of(text) > width else { return text }
        var kept = ""
        var used = 0
        for character in text {
            let next = DisplayWidth.of(character)
            if used + next > width - 1 { break }
            kept.append(character)
            used += next
        }
        return kept + "…"
    }

    private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - DisplayWidth.of(text)))
        return right ? padding + text : text + padding
    }

    private func paint(_ text: String, _ code: String) -> String {
        color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// The line without the colour codes ``paint(_:_:)`` puts in (`ESC [ digits m`), to
    /// measure it. (Card text never holds an ESC: ``TerminalText/safe(_:)`` removed them.)
    private func strip(_ line: String) -> String {
        guard color else { return line }
        var out = String.UnicodeScalarView()
        var scalars = line.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard scalar == "\u{1B}" else {
                out.append(scalar)
                continue
            }
            while let next = scalars.next(), next != "m" {}
        }
        return String(out)
    }

    private func trimTrailing(_ line: String) -> String {
        var line = line
        while line.last == " " { line.removeLast() }
        return line
    }
}

/// Terminal columns a text takes: emoji and East Asian wide characters take two.
enum DisplayWidth {
    static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        if scalars.contains(where: { $0.value == 0xFE0F || $0.properties.isEmojiPresentation }) { return 2 }
        guard let first = scalars.first else { return 0 }
        switch first.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            return first.properties.generalCategory == .nonspacingMark ? 0 : 1
        }
    }
}

/// Text from upstream data made safe to print on a terminal: control characters (C0, DEL
/// and C1, which include ESC and the 8-bit CSI) are dropped, so a hostile title cannot
/// move the cursor, recolour or retitle the terminal; tabs and line breaks become spaces.
public enum TerminalText {
    public static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\t" || scalar == "\n" || scalar == "\r" {
                out.append(" ")
            } else if !isControl(scalar) {
                out.append(scalar)
            }
        }
        return String(out)
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
