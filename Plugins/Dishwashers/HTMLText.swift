/// Plain text from the product page's HTML: tags dropped, entities decoded, paragraphs
/// and list items kept as lines.
enum HTMLText {
    private static let entities = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "pound": "£", "euro": "€",
        "ndash": "–", "mdash": "—", "rsquo": "’", "lsquo": "‘", "rdquo": "”", "ldquo": "“", "hellip": "…", "deg": "°",
    ]

    static func plain(_ html: String) -> String {
        var text = ""
        var index = html.startIndex
        while index < html.endIndex {
            let character = html[index]
            if character == "<", let close = html[index...].firstIndex(of: ">") {
                let tag = html[html.index(after: index)..<close].lowercased()
                let name = tag.split(whereSeparator: { $0 == " " || $0 == "/" }).first.map(String.init) ?? ""
                switch name {
                case "p", "br", "ul", "div": text += "\n"
                case "li": text += "\n• "
                default: break
                }
                if tag.hasPrefix("/") && ["p", "ul", "li", "div"].contains(String(tag.dropFirst())) { text += "\n" }
                index = html.index(after: close)
            } else if character == "&", let semicolon = html[index...].prefix(10).firstIndex(of: ";") {
                let name = String(html[html.index(after: index)..<semicolon])
                if let decoded = decode(entity: name) {
                    text += decoded
                    index = html.index(after: semicolon)
                } else {
                    text.append(character)
                    index = html.index(after: index)
                }
            } else {
                text.append(character)
                index = html.index(after: index)
            }
        }
        return tidy(text)
    }

    private static func decode(entity name: String) -> String? {
        if let known = entities[name] { return known }
        if name.hasPrefix("#x") || name.hasPrefix("#X") {
            return UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
        }
        if name.hasPrefix("#") { return UInt32(name.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) } }
        return nil
    }

    /// Trims every line, folds runs of spaces, and keeps at most one blank line.
    private static func tidy(_ text: String) -> String {
        var lines: [String] = []
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = raw.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
            if line.isEmpty || line == "•" {
                if lines.last != "" { lines.append("") }
            } else {
                if line.hasPrefix("•"), lines.last == "", lines.dropLast().last?.hasPrefix("•") == true { lines.removeLast() }
                lines.append(line)
            }
        }
        while lines.first == "" { lines.removeFirst() }
        while lines.last == "" { lines.removeLast() }
        return lines.joined(separator: "\n")
    }
}
