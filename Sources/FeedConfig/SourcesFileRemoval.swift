import FeedCore
import Foundation

extension SourcesFileEdit {
    /// `text` without the source entry `id`: the lines from its `- ` to the next entry's
    /// (comments and blank lines just above the next entry stay with it), checked like an
    /// addition: the result, read as YAML, is the old document with exactly that entry
    /// gone, or this throws and the caller writes nothing.
    public static func removing(_ id: String, from text: String, file: String) throws(Failure) -> String {
        try replacing(id, with: nil, in: text, file: file, onlyWritten: false)
    }

    /// `text` with the source entry `id` replaced by `entry` in its place (nil removes
    /// it), checked as ``removing(_:from:file:)``. Replacing needs an entry of the kind
    /// this writer writes (id, name, plugin, url, tags): any other setting would be lost,
    /// so such an entry is left to be changed by hand; with `onlyWritten`, so is removing.
    public static func replacing(_ id: String, with entry: NewSourceEntry?, in text: String, file: String,
                                 onlyWritten: Bool = true) throws(Failure) -> String {
        let (before, entries, index) = try Self.sourceEntry(id, in: text, file: file)
        if onlyWritten || entry != nil, NodeShape(entries[index]) != Self.written(entries[index]).map(NodeShape.init) {
            throw Failure(description: "the entry \(id) has settings besides id, name, plugin, url and tags; change it in the file")
        }
        var lines = text.components(separatedBy: "\n")
        let start = entries[index].location.line - 1
        guard start < lines.count, lines[start].trimmingCharacters(in: .whitespaces).hasPrefix("-") else {
            throw Failure(description: "its sources: list is written on one line (flow style); remove \(id) by hand")
        }
        // The entry ends where the next begins (the comments just above that one are its),
        // or where the list does.
        var end = index + 1 < entries.count ? entries[index + 1].location.line - 1 : listEnd(lines, from: start + 1)
        while end > start + 1, lines[end - 1].trimmingCharacters(in: .whitespaces).isEmpty || lines[end - 1].trimmingCharacters(in: .whitespaces).hasPrefix("#") {
            end -= 1
        }
        let indent = String(lines[start].prefix { $0 == " " })
        var replacement = entry.map { yaml(for: [$0], indent: indent).components(separatedBy: "\n") } ?? []
        if replacement.last == "" { replacement.removeLast() }
        lines.replaceSubrange(start..<end, with: replacement)
        let updated = lines.joined(separator: "\n")
        let after = try Self.reread(updated, file: file)
        guard let after, NodeShape(after) == NodeShape(before).replacingSource(at: index, with: entry.map(NodeShape.init)) else {
            throw Failure(description: "the result would not read back as exactly the entry \(id) \(entry == nil ? "removed" : "changed")")
        }
        return updated
    }

    /// The document `text`, its source entries, and the place of the one with `id` among
    /// them: what every edit of one entry starts from.
    static func sourceEntry(_ id: String, in text: String, file: String) throws(Failure) -> (document: ConfigNode, entries: [ConfigNode], index: Int) {
        let parsed: ConfigNode?
        do {
            parsed = try YAMLDocument.parse(text, file: file)
        } catch {
            throw Failure(description: "it does not read as YAML: \(error.description)")
        }
        guard let parsed, case .map(let top) = parsed.value, let sources = top.last(where: { $0.key == "sources" }),
              case .list(let entries) = sources.value.value else {
            throw Failure(description: "it has no top-level sources: list")
        }
        guard let index = entries.firstIndex(where: { Self.id(of: $0) == id }) else {
            throw Failure(description: "it has no source with the id \(id)")
        }
        return (parsed, entries, index)
    }

    /// An edit's result read back as YAML, to compare with what was meant (nil: empty).
    static func reread(_ updated: String, file: String) throws(Failure) -> ConfigNode? {
        do {
            return try YAMLDocument.parse(updated, file: file)
        } catch {
            throw Failure(description: "the result would not read as YAML: \(error.description)")
        }
    }

    /// A source entry as this writer would write it, from its id, name, plugin, url and
    /// tags (nil without an id, plugin or url).
    static func written(_ node: ConfigNode) -> NewSourceEntry? {
        guard case .map(let pairs) = node.value else { return nil }
        func text(_ key: String) -> String? {
            guard case .scalar(let scalar)? = pairs.last(where: { $0.key == key })?.value.value else { return nil }
            return scalar.text
        }
        let folders = pairs.last(where: { $0.key == "options" }).map { Self.tags(in: $0.value) } ?? []
        guard let id = text("id"), let plugin = text("plugin"), let url = text("url").flatMap(URL.init(string:)) else { return nil }
        return NewSourceEntry(id: id, name: text("name"), plugin: plugin, url: url, tags: folders)
    }

    /// The `tags:` of a source's `options:` mapping, as written (the folders an entry is in).
    public static func tags(in options: ConfigNode) -> [String] {
        guard case .map(let entries) = options.value, case .list(let items)? = entries.last(where: { $0.key == "tags" })?.value.value else { return [] }
        return items.compactMap { if case .scalar(let scalar) = $0.value { scalar.text } else { nil } }
    }

    /// The `id:` of a source entry, as written.
    static func id(of entry: ConfigNode) -> String? {
        guard case .map(let pairs) = entry.value, case .scalar(let id)? = pairs.last(where: { $0.key == "id" })?.value.value else { return nil }
        return id.text
    }
}

extension NodeShape {
    /// This document (a mapping) with the `index`th entry of its `sources` list replaced
    /// by `entry`, or removed.
    func replacingSource(at index: Int, with entry: NodeShape?) -> NodeShape? {
        guard case .map(var pairs) = self, let place = pairs.lastIndex(where: { $0.key == "sources" }),
              case .list(var items) = pairs[place].value, items.indices.contains(index) else { return nil }
        if let entry { items[index] = entry } else { items.remove(at: index) }
        pairs[place].value = .list(items)
        return .map(pairs)
    }
}
