import ArgumentParser
import FeedCore
import FeedDigest
import FeedEngine
import Foundation

/// `aggregate sources`: what Sources.yml configures, secrets redacted.
struct SourcesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sources",
        abstract: "List the configured sources (id, plugin, enabled, URL with secrets redacted).")

    @OptionGroup var common: CommonOptions
    @OptionGroup var output: CardFormatOptions

    func run() async throws {
        let config = try common.loadConfig()
        let rows = config.sources.map(SourceListing.init)
        switch output.formatType.name {
        case CSVFormat.name:
            Terminal.write(DelimitedTable.csv(header: SourceListing.header, rows: rows.map(\.cells)))
        case TSVFormat.name:
            Terminal.write(DelimitedTable.tsv(header: SourceListing.header, rows: rows.map(\.cells)))
        case JSONLinesFormat.name:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            for row in rows {
                Terminal.write(String(decoding: try encoder.encode(row), as: UTF8.self) + "\n")
            }
        case TextFormat.name:
            let idWidth = rows.map(\.id.count).max() ?? 0
            let pluginWidth = rows.map(\.plugin.count).max() ?? 0
            for row in rows {
                let state = row.enabled ? "enabled " : "disabled"
                Terminal.write("\(row.id.padding(toLength: idWidth, withPad: " ", startingAt: 0))  \(row.plugin.padding(toLength: pluginWidth, withPad: " ", startingAt: 0))  \(state)  \(row.url)\n")
            }
        default:
            Terminal.writeError("aggregate: sources prints jsonl, text, csv or tsv, not \(output.formatType.name)")
            throw ExitStatus.usage.code
        }
    }
}

/// `aggregate validate`: check the configuration and exit 0 or 2.
struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check Sources.yml; print every problem with its line and column. Exits 0 or 2.")

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let config = try common.loadConfig()
        // Templates are part of the configuration: a broken one fails validation.
        for digest in config.digests {
            guard let path = digest.template else { continue }
            do {
                _ = try DigestTemplate(path: path)
            } catch {
                Terminal.writeError(error.description)
                throw ExitStatus.usage.code
            }
        }
        let enabled = config.sources.filter(\.enabled).count
        Terminal.writeError("\(config.file): ok, \(config.sources.count) source\(config.sources.count == 1 ? "" : "s") (\(enabled) enabled)")
    }
}
