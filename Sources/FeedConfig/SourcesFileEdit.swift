import FeedCore
import Foundation

/// A source entry to add to Sources.yml, as data: ``SourcesFileEdit`` writes it as YAML.
/// Every field may come from a hostile document (an OPML title, a feed's URL); only the
/// writer turns them into text.
public struct NewSourceEntry: Sendable, Hashable {
    public var id: String
    /// The `name:` people see (a feed's or an OPML outline's title).
    public var name: String?
    public var plugin: String
    public var url: URL
    /// The `options: tags:` list (an OPML file's folders).
    public var tags: [String]
    /// Written as a `#` comment after the id: where the entry came from.
    public var comment: String?

    /// A byte-order mark in a tag is dropped: it shows as nothing, and YAML's reader does
    /// not give back a `\uFEFF` escape as written.
    public init(id: String, name: String? = nil, plugin: String, url: URL, tags: [String] = [], comment: String? = nil) {
        self.id = id
        self.name = name.map(Self.nameLine).flatMap { $0.isEmpty ? nil : $0 }
        self.plugin = plugin
        self.url = url
        // Folders are bounded like titles: one line of at most 120 characters, at most 20 of them.
        var folders: [String] = []
        for tag in tags {
            let line = Self.nameLine(tag.contains("\u{FEFF}") ? tag.replacingOccurrences(of: "\u{FEFF}", with: "") : tag)
            if !line.isEmpty, !folders.contains(line), folders.count < Self.mostFolders { folders.append(line) }
        }
        self.tags = folders
        self.comment = comment
    }

    /// The most folders (`tags:`) an entry written here is in.
    public static let mostFolders = 20

    /// A title as a `name:` Sources.yml accepts: one line (controls, line breaks and
    /// direction marks become spaces, runs of spaces one), at most 120 characters.
    static func nameLine(_ title: String) -> String {
        SourcesFileEdit.commentText(title)
    }
}

/// Adding entries to a Sources.yml without rewriting it: the new entries go at the end of
/// its `sources:` list, and every other line, comments included, stays as it was.
///
/// Every string that `aggregate` writes into Sources.yml goes through this one writer: an
/// id made of `[a-z0-9-]`, every other value as a double-quoted scalar with each character
/// YAML could read as a line break or control escaped, comments stripped of them. And the
/// result is read back before it is written: it must hold the old document plus exactly
/// the new entries (``adding(_:to:file:)``), or nothing is written.
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

    /// The YAML lines of `entries`, indented as the file's own entries are.
    public static func yaml(for entries: [NewSourceEntry], indent: String) -> String {
        entries.map { entry in
            var lines = "\(indent)- id: \(scalar(entry.id))"
            if let comment = entry.comment.map(commentText), !comment.isEmpty { lines += "   # \(comment)" }
            lines += "\n"
            if let name = entry.name { lines += "\(indent)  name: \(quoted(name))\n" }
            lines += "\(indent)  plugin: \(scalar(entry.plugin))\n"
            lines += "\(indent)  url: \(quoted(entry.url.absoluteString))\n"
            if !entry.tags.isEmpty {
                lines += "\(indent)  options:\n\(indent)    tags: [\(entry.tags.map(quoted).joined(separator: ", "))]\n"
            }
            return lines
        }.joined(separator: "\n")
    }

    /// `text` with `entries` at the end of its `sources:` list, checked: the result, read
    /// as YAML, is the old document with exactly these entries added and nothing else
    /// changed, or this throws and the caller writes nothing.
    public static func adding(_ entries: [NewSourceEntry], to text: String, file: String) throws(Failure) -> String {
        let updated = try appending(yaml(for: entries, indent: entryIndent(in: text)), to: text)
        let before: ConfigNode?
        let after: ConfigNode?
        do {
            before = try YAMLDocument.parse(text, file: file)
            after = try YAMLDocument.parse(updated, file: file)
        } catch {
            throw Failure(description: "the result would not read as YAML: \(error.description)")
        }
        // An empty file reads as nothing: a document with no keys yet.
        let shape = before.map(NodeShape.init) ?? .map([])
        guard let after, let expected = shape.appendingSources(entries.map(NodeShape.init)), NodeShape(after) == expected else {
            throw Failure(description: "the result would not read back as exactly the entries meant to be added")
        }
        return updated
    }

    /// Where the `sources:` list whose entries begin at line index `from` ends: at the next
    /// top-level key; comments and blank lines just above that key belong to it.
    static func listEnd(_ lines: [String], from: Int) -> Int {
        var end = lines[from...].firstIndex { line in
            guard let first = line.first else { return false }
            return first != " " && first != "#" && first != "-" && first != "\t"
        } ?? lines.count
        while end > from, lines[end - 1].trimmingCharacters(in: .whitespaces).isEmpty || lines[end - 1].hasPrefix("#") {
            end -= 1
        }
        return end
    }

    /// `text` with `entries` (YAML lines, already indented) at the end of its `sources:`
    /// block list.
    static func appending(_ entries: String, to text: String) throws(Failure) -> String {
        var lines = text.components(separatedBy: "\n")
        // No list yet: one at the end of the file (before its last line break).
        if !lines.contains(where: { $0.hasPrefix("sources:") }) {
            lines.insert("sources:", at: lines.last == "" ? lines.count - 1 : lines.count)
        }
        guard let start = lines.firstIndex(where: { $0.hasPrefix("sources:") }) else {
            throw Failure(description: "it has no top-level sources: list to add to")
        }
        var rest = lines[start].dropFirst("sources:".count).trimmingCharacters(in: .whitespaces)
        if rest.hasPrefix("[]") {
            // An empty flow list (`sources: []`) becomes a block list; a comment after it stays.
            rest = rest.dropFirst(2).trimmingCharacters(in: .whitespaces)
            let spacing = lines[start].dropFirst("sources:".count).drop { $0 == " " }.dropFirst(2).prefix { $0 == " " }
            lines[start] = "sources:" + (rest.isEmpty ? "" : spacing + rest)
        }
        guard rest.isEmpty || rest.hasPrefix("#") else {
            throw Failure(description: "its sources: list is written on one line (flow style); write it as one `- id:` entry per line first")
        }
        let end = listEnd(lines, from: start + 1)
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

    /// `text` plain when it is a word of `[a-z][a-z0-9-]*` that YAML reads as text (an id
    /// `yes` or `null` would be a boolean or nothing), else double-quoted.
    static func scalar(_ text: String) -> String {
        let word = text.utf8.first.map { $0 &- UInt8(ascii: "a") < 26 } == true
            && text.utf8.allSatisfy { $0 &- UInt8(ascii: "a") < 26 || $0 &- UInt8(ascii: "0") < 10 || $0 == UInt8(ascii: "-") }
        return word && YAMLPlainScalar.kind(text) == .text ? text : quoted(text)
    }

    /// A YAML double-quoted scalar of `text`. Escaped: the quote and backslash, every C0
    /// and C1 control (NEL, U+0085, among them), the line and paragraph separators
    /// (U+2028, U+2029: line breaks to YAML 1.1), the byte-order mark and the noncharacters
    /// U+FFFE and U+FFFF; so the scalar is one line that YAML reads back as `text`.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x09: out += "\\t"
            case 0x0D: out += "\\r"
            case 0x85: out += "\\N"
            case 0x2028: out += "\\L"
            case 0x2029: out += "\\P"
            case 0..<0x20, 0x7F...0x9F: out += String(format: "\\x%02X", scalar.value)
            case 0xFEFF, 0xFFFE, 0xFFFF: out += String(format: "\\u%04X", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// `text` as the body of a `#` comment: every character YAML reads as a line break,
    /// every control, format and bidirectional character, becomes a space (a comment ends
    /// at a line break, so one left in would start a line of YAML), runs of spaces become
    /// one, and it is cut at 120 characters.
    public static func commentText(_ text: String) -> String {
        var out = ""
        var lastWasSpace = true
        for scalar in text.unicodeScalars {
            let blank = scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format
                || scalar.properties.generalCategory == .lineSeparator || scalar.properties.generalCategory == .paragraphSeparator
                || scalar.properties.isWhitespace || scalar.value == 0xFFFE || scalar.value == 0xFFFF
            if blank {
                if !lastWasSpace { out += " " }
                lastWasSpace = true
            } else {
                out.unicodeScalars.append(scalar)
                lastWasSpace = false
            }
        }
        while out.hasSuffix(" ") { out.removeLast() }
        return out.count > 120 ? String(out.prefix(119)) + "…" : out
    }
}

extension NodeShape {
    /// What an entry written by ``SourcesFileEdit/yaml(for:indent:)`` must read back as.
    init(_ entry: NewSourceEntry) {
        var pairs = [Pair(key: "id", value: .scalar(entry.id, .text))]
        if let name = entry.name { pairs.append(Pair(key: "name", value: .scalar(name, .text))) }
        pairs += [Pair(key: "plugin", value: .scalar(entry.plugin, .text)),
                  Pair(key: "url", value: .scalar(entry.url.absoluteString, .text))]
        if !entry.tags.isEmpty {
            pairs.append(Pair(key: "options", value: .map([Pair(key: "tags", value: .list(entry.tags.map { .scalar($0, .text) }))])))
        }
        self = .map(pairs)
    }

    /// This document (a mapping) with `entries` at the end of its `sources` list.
    func appendingSources(_ entries: [NodeShape]) -> NodeShape? {
        guard case .map(var pairs) = self else { return nil }
        guard let index = pairs.firstIndex(where: { $0.key == "sources" }) else {
            // No list yet: it is made at the end.
            return .map(pairs + [Pair(key: "sources", value: .list(entries))])
        }
        switch pairs[index].value {
        case .list(let items): pairs[index].value = .list(items + entries)
        // `sources:` with nothing under it yet.
        case .scalar(_, .null): pairs[index].value = .list(entries)
        default: return nil
        }
        return .map(pairs)
    }
}
