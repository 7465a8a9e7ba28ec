import FeedCore

/// Cards as aligned columns for a person: id, title, price, then tags and where the
/// card came from when it was not live. Titles shrink to fit the terminal width.
struct TextTable {
    var width: Int?
    var color: Bool

    private static let gap = "  "
    private static let minimumTitle = 12

    func render(_ cards: [Card]) -> String {
        guard !cards.isEmpty else { return "" }
        let rows = cards.map { card in
            (id: card.id, title: card.title, price: card.price?.label ?? "",
             extra: (card.tags + (card.origin.map { ["[\($0.rawValue)]"] } ?? [])).joined(separator: ", "))
        }
        let idWidth = rows.map { DisplayWidth.of($0.id) }.max() ?? 0
        let priceWidth = rows.map { DisplayWidth.of($0.price) }.max() ?? 0
        var titleWidth = rows.map { DisplayWidth.of($0.title) }.max() ?? 0
        let fixed = idWidth + priceWidth + 2 * Self.gap.count
        if let width, fixed + titleWidth > width {
            titleWidth = max(Self.minimumTitle, width - fixed)
        }
        return rows.map { row in
            var line = paint(pad(row.id, idWidth), "2") + Self.gap + pad(fit(row.title, titleWidth), titleWidth)
            if priceWidth > 0 { line += Self.gap + paint(pad(row.price, priceWidth, right: true), "32") }
            if !row.extra.isEmpty {
                let used = idWidth + titleWidth + priceWidth + 3 * Self.gap.count
                if let width {
                    // Only what fits, and only if something useful fits.
                    if width - used > 3 { line += Self.gap + paint(fit(row.extra, width - used), "33") }
                } else {
                    line += Self.gap + paint(row.extra, "33")
                }
            }
            return trimTrailing(line) + "\n"
        }.joined()
    }

    private func fit(_ text: String, _ width: Int) -> String {
        let flat = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        guard DisplayWidth.of(flat) > width else { return flat }
        var kept = ""
        var used = 0
        for character in flat {
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
