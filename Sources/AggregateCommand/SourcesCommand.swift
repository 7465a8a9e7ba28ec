import ArgumentParser
import FeedConfig
import FeedCore
import FeedDigest
import FeedEngine
import FeedFormats
import Foundation

/// `aggregate sources`: what Sources.yml configures, secrets redacted.
struct SourcesCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "sources",
        abstract: "List the configured sources (id, plugin, enabled, URL with secrets redacted), or write them as OPML.")

    @OptionGroup var common: CommonOptions

    @Option(help: "Output format: jsonl, text, csv, tsv or opml (the feed sources as an OPML 2.0 subscription list; default: text on a terminal, jsonl otherwise).")
    var format: String?

    @Option(help: "With --format opml: the address of a running serve, to list every other source by its served feed (URL/feed.atom?source=ID).")
    var serveURL: String?

    @Flag(help: "With --format opml: list disabled sources too (left out by default: a reader would follow what this one does not).")
    var includeDisabled = false

    func run(in context: CommandContext) async throws {
        let config = try common.loadConfig(context.registry)
        let rows = config.sources.map { SourceListing($0, everySource: config.filters) }
        if format == "opml" {
            context.stdout.write(OPML.document(of: config, registry: context.registry, servedAt: serveURL, includeDisabled: includeDisabled))
            return
        }
        switch format ?? (Terminal.stdoutIsTerminal ? TextFormat.name : JSONLinesFormat.name) {
        case CSVFormat.name:
            context.stdout.write(DelimitedTable.csv(header: SourceListing.header, rows: rows.map(\.cells)))
        case TSVFormat.name:
            context.stdout.write(DelimitedTable.tsv(header: SourceListing.header, rows: rows.map(\.cells)))
        case JSONLinesFormat.name:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            for row in rows {
                context.stdout.write(String(decoding: try encoder.encode(row), as: UTF8.self) + "\n")
            }
        case TextFormat.name:
            let idWidth = rows.map(\.id.count).max() ?? 0
            let pluginWidth = rows.map(\.plugin.count).max() ?? 0
            // The top-level rules once, above the sources they all apply to.
            for rule in config.filters.lines { context.stdout.write("every source: \(rule)\n") }
            for row in rows {
                let state = row.enabled ? "enabled " : "disabled"
                context.stdout.write("\(row.id.padding(toLength: idWidth, withPad: " ", startingAt: 0))  \(row.plugin.padding(toLength: pluginWidth, withPad: " ", startingAt: 0))  \(state)  \(row.url)\n")
                for rule in (row.filters ?? []) where !rule.hasSuffix(SourceListing.everySourceMark) { context.stdout.write("\(String(repeating: " ", count: idWidth + 2))\(rule)\n") }
            }
        default:
            Terminal.writeError("aggregate: sources prints jsonl, text, csv, tsv or opml, not \(format ?? "")")
            throw ExitStatus.usage.code
        }
    }
}

/// `aggregate validate`: check the configuration and exit 0 or 2.
struct ValidateCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check Sources.yml; print every problem with its line and column. Exits 0 or 2.")

    @OptionGroup var common: CommonOptions

    func run(in context: CommandContext) async throws {
        let config = try common.loadConfig(context.registry)
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
        for warning in config.warnings { Terminal.writeError("\(warning) (warning)") }
        let enabled = config.sources.filter(\.enabled).count
        Terminal.writeError("\(config.file): ok, \(config.sources.count) source\(config.sources.count == 1 ? "" : "s") (\(enabled) enabled)")
    }
}
