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
        let idWidth = rows.map(\.id.count).max() ?? 0
        let priceWidth = rows.map(\.price.count).max() ?? 0
        var titleWidth = rows.map(\.title.count).max() ?? 0
        let fixed = idWidth + priceWidth + 2 * Self.gap.count
        if let width, fixed + titleWidth > width {
            titleWidth = max(Self.minimumTitle, width - fixed)
        }
        return rows.map { row in
            var line = paint(pad(row.id, idWidth), "2") + Self.gap + pad(fit(row.title, titleWidth), titleWidth)
            if priceWidth > 0 { line += Self.gap + paint(pad(row.price, priceWidth, right: true), "32") }
            if !row.extra.isEmpty {
                let used = idWidth + titleWidth + priceWidth + 3 * Self.gap.count
                let room = width.map { $0 - used } ?? row.extra.count
                if room > 3 { line += Self.gap + paint(fit(row.extra, room), "33") }
            }
            return trimTrailing(line) + "\n"
        }.joined()
    }

    private func fit(_ text: String, _ width: Int) -> String {
        let flat = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return flat.count <= width ? flat : String(flat.prefix(max(0, width - 1))) + "…"
    }

    private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
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
