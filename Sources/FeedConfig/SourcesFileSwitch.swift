import FeedCore
import Foundation

extension SourcesFileEdit {
    /// `text` with the source `id` enabled or disabled, one line changed and the rest as it
    /// was: disabling writes `enabled: false` (its own line before the entry's second key,
    /// or the value of the `enabled:` line it has); enabling takes out an `enabled: false`
    /// line with nothing else on it, else writes `true` there. Checked: the result reads as
    /// the old document with only that entry's `enabled` changed, or this throws.
    public static func enabling(_ id: String, _ enabled: Bool, in text: String, file: String) throws(Failure) -> String {
        let (before, entries, index) = try Self.sourceEntry(id, in: text, file: file)
        guard case .map(let pairs) = entries[index].value else { throw Failure(description: "the entry \(id) is not a mapping") }
        var lines = text.components(separatedBy: "\n")
        let start = entries[index].location.line - 1
        guard start < lines.count, lines[start].trimmingCharacters(in: .whitespaces).hasPrefix("-"),
              !lines[start].trimmingCharacters(in: .whitespaces).dropFirst().trimmingCharacters(in: .whitespaces).hasPrefix("{") else {
            throw Failure(description: "the entry \(id) is written on one line (flow style); change it in the file")
        }
        let value = enabled ? "true" : "false"
        if let line = pairs.last(where: { $0.key == "enabled" }).map({ $0.keyLocation.line - 1 }) {
            guard line != start, line < lines.count else { throw Failure(description: "the entry \(id) starts with enabled:; change it in the file") }
            let indent = lines[line].prefix { $0 == " " }
            // What follows the value: spaces and a comment, kept.
            let afterKey = lines[line].dropFirst(indent.count + "enabled:".count)
            let valueAndRest = afterKey.drop { $0 == " " }
            let rest = valueAndRest.drop { $0 != " " && $0 != "#" }
            if enabled && rest.trimmingCharacters(in: .whitespaces).isEmpty {
                lines.remove(at: line)
            } else {
                lines[line] = indent + "enabled: " + value + rest
            }
        } else if !enabled {
            // Its own line, indented as the entry's keys, before the second key (the first
            // is on the `- ` line).
            let keyIndent = String(repeating: " ", count: max(0, (pairs.first?.keyLocation.column ?? 1) - 1))
            let place = pairs.count > 1 ? pairs[1].keyLocation.line - 1 : start + 1
            lines.insert(keyIndent + "enabled: false", at: min(place, lines.count))
        }
        let updated = lines.joined(separator: "\n")
        let after = try Self.reread(updated, file: file)
        guard let after, NodeShape(after).withoutEnabled(ofSource: index) == NodeShape(before).withoutEnabled(ofSource: index),
              case .map(let newTop) = after.value, case .list(let newEntries)? = newTop.last(where: { $0.key == "sources" })?.value.value,
              newEntries.indices.contains(index), Self.enabled(newEntries[index]) == enabled else {
            throw Failure(description: "the result would not read back as exactly \(id) \(enabled ? "enabled" : "disabled")")
        }
        return updated
    }

    /// Whether a source entry is enabled as written (no `enabled:` is enabled).
    static func enabled(_ entry: ConfigNode) -> Bool {
        guard case .map(let pairs) = entry.value, let node = pairs.last(where: { $0.key == "enabled" })?.value else { return true }
        guard case .scalar(let scalar) = node.value else { return true }
        return scalar.kind != .boolean || !["false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"].contains(scalar.text)
    }
}

extension NodeShape {
    /// This document with the `enabled` key of its `index`th source left out: what an
    /// enable or disable must leave as it was.
    func withoutEnabled(ofSource index: Int) -> NodeShape? {
        guard case .map(var pairs) = self, let place = pairs.lastIndex(where: { $0.key == "sources" }),
              case .list(var items) = pairs[place].value, items.indices.contains(index), case .map(let entry) = items[index] else { return nil }
        items[index] = .map(entry.filter { $0.key != "enabled" })
        pairs[place].value = .list(items)
        return .map(pairs)
    }
}

extension SourcesFile {
    /// Enables or disables the source `id`, as ``add(_:)`` writes.
    public func setEnabled(_ id: String, _ enabled: Bool) throws(Failure) {
        let text = try current()
        let updated: String
        do {
            updated = try SourcesFileEdit.enabling(id, enabled, in: text, file: config.file)
        } catch {
            throw .unplaceable(path: path, reason: error.description)
        }
        try replace(with: loading(updated))
    }
}
