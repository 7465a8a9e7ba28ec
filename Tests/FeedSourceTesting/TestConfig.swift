import FeedConfig
import FeedCore
import FeedEngine
import FixtureKit
import Foundation

/// Settings for a source under test, written as the Sources.yml lines a user would write
/// and loaded through the real config loader (so option errors are the real ones).
public enum TestConfig {
    public struct NoSource: Error {}

    /// `options` is the YAML under `options:`, e.g. `"per_page: 20"`.
    public static func settings(for source: any BuiltinSource.Type, url: String, options: String = "") throws -> SourceSettings {
        var yaml = "sources:\n  - id: \(source.plugin)\n    plugin: \(source.plugin)\n    url: \(url)\n"
        if !options.isEmpty {
            yaml += "    options:\n" + options.split(separator: "\n").map { "      \($0)\n" }.joined()
        }
        let config = try ConfigLoader(registry: SourceRegistry([source]), environment: [:]).load(text: yaml, file: "Sources.yml")
        guard let entry = config.sources.first else { throw NoSource() }
        return entry.settings
    }
}
