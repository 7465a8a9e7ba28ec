import Foundation

/// The README's per-source sections (`### Source: \`<plugin>\``), read from the checkout.
public enum ReadmeSections {
    public struct Missing: Error, CustomStringConvertible {
        public let plugin: String
        public var description: String { "README.md has no section \"### Source: `\(plugin)`\"" }
    }

    /// The repository root of the checkout these tests were built from.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The text of the section for `plugin`, up to the next heading of the same or a higher level.
    public static func section(for plugin: String) throws -> String {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("### Source: `\(plugin)`") }) else {
            throw Missing(plugin: plugin)
        }
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("## ") || $0.hasPrefix("### ") } ?? lines.endIndex
        return lines[start..<end].joined(separator: "\n")
    }
}
