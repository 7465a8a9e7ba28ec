import FeedCore
import Foundation

/// Adding entries to a Sources.yml without rewriting it: the new entries go at the end of
/// its `sources:` list, and every other line, comments included, stays as it was.
public enum SourcesFileEdit {
    /// Why the entries could not be placed.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The indentation of the `- ` of the file's source entries (`"  "` when it has none).
    public static func entryIndent(in text: String) -> String {
        let lines = text.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix("sources:") }) else { return "  " }
        for line in lines[(start + 1)...] {
            let indent = line.prefix { $0 == " " }
            if line.dropFirst(indent.count).hasPrefix("- ") { return String(indent) }
            if !line.isEmpty, !line.hasPrefix(" "), !line.hasPrefix("#") { break }
        }
        return "  "
    }

    /// `text` with `entries` (YAML lines, already indented) at the end of its `sources:`
    /// block list.
    public static func appending(_ entries: String, to text: String) throws(Failure) -> String {
        var lines = text.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix("sources:") }) else {
            throw Failure(description: "it has no top-level sources: list to add to")
        }
        let rest = lines[start].dropFirst("sources:".count).trimmingCharacters(in: .whitespaces)
        guard rest.isEmpty || rest.hasPrefix("#") else {
            throw Failure(description: "its sources: list is written on one line (flow style); write it as one `- id:` entry per line first")
        }
        // The list ends at the next top-level key; comments and blank lines just above that
        // key belong to it.
        var end = lines[(start + 1)...].firstIndex { line in
            guard let first = line.first else { return false }
            return first != " " && first != "#" && first != "-" && first != "\t"
        } ?? lines.count
        while end > start + 1, lines[end - 1].trimmingCharacters(in: .whitespaces).isEmpty || lines[end - 1].hasPrefix("#") {
            end -= 1
        }
        var added = entries.components(separatedBy: "\n")
        if added.last == "" { added.removeLast() }
        lines.insert(contentsOf: [""] + added, at: end)
        var result = lines.joined(separator: "\n")
        if !result.hasSuffix("\n") { result += "\n" }
        return result
    }

    /// A source id made from `title`: lower-case letters, digits and `-`, at most 40
    /// characters, not one of `taken` (`-2`, `-3` … added).
    public static func id(from title: String, taken: Set<String>) -> String {
        var slug = ""
        for character in title.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil).lowercased() {
            if character.isASCII, character.isLetter || character.isNumber {
                slug.append(character)
            } else if !slug.isEmpty, slug.last != "-" {
                slug.append("-")
            }
        }
        slug = String(slug.prefix(40))
        while slug.hasSuffix("-") { slug.removeLast() }
        if slug.isEmpty || !(slug.first?.isLetter ?? false) { slug = "feed" + (slug.isEmpty ? "" : "-" + slug) }
        var candidate = slug
        var number = 2
        while taken.contains(candidate) {
            candidate = "\(slug)-\(number)"
            number += 1
        }
        return candidate
    }

    /// A YAML double-quoted scalar of `text`.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F { out += String(format: "\\x%02X", scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }
}
