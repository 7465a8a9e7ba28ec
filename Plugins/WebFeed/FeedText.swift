import Foundation

/// Text for cards from the HTML feeds carry: tags dropped, entities decoded, white space
/// collapsed; and the first image of a piece of content.
enum FeedText {
    /// Plain text of `html`: `<p>Caf&eacute; <b>au</b>  lait</p>` → `Café au lait`.
    /// `<script>` and `<style>` bodies are dropped with their tags.
    static func plain(_ html: String) -> String {
        var text = ""
        var index = html.startIndex
        while index < html.endIndex {
            let character = html[index]
            if character == "<", let close = html[index...].firstIndex(of: ">") {
                let tag = html[html.index(after: index)..<close].lowercased()
                let name = tag.prefix { $0.isLetter || $0.isNumber }
                index = html.index(after: close)
                if name == "script" || name == "style", let end = html[index...].range(of: "</\(name)", options: .caseInsensitive) {
                    index = html[end.upperBound...].firstIndex(of: ">").map { html.index(after: $0) } ?? html.endIndex
                }
                // Block elements separate words that the markup alone kept apart.
                if ["p", "br", "div", "li", "tr", "td", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote"].contains(String(name))
                    || tag.hasPrefix("/") { text += " " }
            } else if character == "&", let semicolon = html[index...].prefix(12).firstIndex(of: ";"),
                      let decoded = HTMLEntities.character(html[html.index(after: index)..<semicolon]) {
                text.append(decoded)
                index = html.index(after: semicolon)
            } else {
                text.append(character)
                index = html.index(after: index)
            }
        }
        return collapse(text)
    }

    /// Runs of white space (line breaks, tabs, no-break spaces) as one space, trimmed.
    static func collapse(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// `text` cut at a word boundary to at most `limit` characters, `…` marking the cut.
    static func cut(_ text: String, to limit: Int) -> String {
        guard text.count > limit else { return text }
        let head = text.prefix(limit)
        let words = head.lastIndex(of: " ").map { head[..<$0] } ?? head
        return words.trimmingCharacters(in: .whitespaces.union(.punctuationCharacters)) + "…"
    }

    /// The first `count` words of `text`, `…` when there were more.
    static func firstWords(_ text: String, _ count: Int) -> String {
        let words = text.split(separator: " ")
        return words.prefix(count).joined(separator: " ") + (words.count > count ? "…" : "")
    }

    /// The `src` of the first `<img>` in `html`, as written.
    static func firstImage(_ html: String) -> String? {
        guard let tag = html.range(of: "<img", options: .caseInsensitive),
              let close = html[tag.upperBound...].firstIndex(of: ">") else { return nil }
        return attribute("src", in: html[tag.upperBound..<close])
    }

    /// The value of `name="…"` (or `'…'`) in a tag's text.
    static func attribute(_ name: String, in tag: Substring) -> String? {
        var search = tag[...]
        while let found = search.range(of: name, options: .caseInsensitive) {
            let before = found.lowerBound == tag.startIndex ? " " : tag[tag.index(before: found.lowerBound)]
            var rest = tag[found.upperBound...].drop { $0 == " " }
            if before.isWhitespace, rest.first == "=" {
                rest = rest.dropFirst().drop { $0 == " " }
                guard let quote = rest.first else { return nil }
                if quote == "\"" || quote == "'" {
                    let value = rest.dropFirst().prefix { $0 != quote }
                    return plain(String(value))
                }
                return String(rest.prefix { !$0.isWhitespace })
            }
            search = tag[found.upperBound...]
        }
        return nil
    }
}
