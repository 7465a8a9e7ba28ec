import Foundation

/// Each source module's own documentation, `Plugins/<Name>/README.md`, which opens with
/// `# Source: \`<plugin>\``; read from the checkout.
public enum ReadmeSections {
    public struct Missing: Error, CustomStringConvertible {
        public let plugin: String
        public var description: String { "no Plugins/*/README.md opens with \"# Source: `\(plugin)`\"" }
    }

    /// The repository root of the checkout these tests were built from.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The README of the source module whose plugin name is `plugin`.
    public static func section(for plugin: String) throws -> String {
        let plugins = root.appendingPathComponent("Plugins")
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: plugins.path)) ?? []
        for folder in folders.sorted() {
            let url = plugins.appendingPathComponent(folder).appendingPathComponent("README.md")
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            if text.hasPrefix("# Source: `\(plugin)`") { return text }
        }
        throw Missing(plugin: plugin)
    }
}
