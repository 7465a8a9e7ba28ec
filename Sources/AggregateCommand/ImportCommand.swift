import ArgumentParser
import FeedConfig
import FeedCore
import FeedEngine
import FeedSupport
import Foundation

/// `aggregate import FILE.opml`: the feeds of a subscription list as `plugin: feed`
/// entries at the end of Sources.yml, the rest of the file untouched.
struct ImportCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add the feeds of an OPML subscription list to Sources.yml (one plugin: feed entry each).",
        discussion: """
            Each outline with an xmlUrl becomes an entry; its folders become the tags option. A feed whose URL \
            is already configured is reported and skipped, so importing a list twice, or an export of this \
            file, adds nothing. The file keeps its text and comments; the entries are checked before it is written.
            """)

    @Argument(help: "The OPML file (as exported by a feed reader).")
    var file: String

    @Flag(help: "Print the entries instead of adding them.")
    var dryRun = false

    @OptionGroup var common: CommonOptions

    func run(in context: CommandContext) async throws {
        guard let data = FileManager.default.contents(atPath: file) else {
            Terminal.writeError("aggregate: cannot read \(file): no such file, or not readable")
            throw ExitStatus.usage.code
        }
        let subscriptions: [OPML.Subscription]
        do {
            subscriptions = try OPML.subscriptions(in: data, file: file)
        } catch {
            Terminal.writeError("\(error.description) (an OPML file from a feed reader's export is expected)")
            throw ExitStatus.usage.code
        }
        let sources = try common.sourcesFile(context.registry)
        var taken = Set(sources.config.sources.map(\.id))
        var configured = Dictionary(sources.config.sources.map { (SourcesFile.key($0.url), $0.id) }, uniquingKeysWith: { first, _ in first })
        var entries: [NewSourceEntry] = []
        let origin = "imported from \(URL(fileURLWithPath: file).lastPathComponent)"
        for subscription in subscriptions {
            if let existing = configured[SourcesFile.key(subscription.url)] {
                // Configured but disabled is said as such: the feed is there, and not read.
                let disabled = sources.config.source(id: existing).map { !$0.enabled } ?? false
                Terminal.writeError("aggregate: skipped \"\(subscription.title)\": \(subscription.url.redactedString) is already configured as \(existing)"
                    + (disabled ? ", but disabled: `aggregate enable \(existing)` reads it" : ""))
                continue
            }
            let id = SourcesFileEdit.id(from: subscription.title, taken: taken)
            taken.insert(id)
            configured[SourcesFile.key(subscription.url)] = id
            entries.append(NewSourceEntry(id: id, name: subscription.title, plugin: "feed", url: subscription.url,
                                          tags: subscription.folders, comment: origin))
        }
        let added = entries.count
        let skipped = subscriptions.count - added
        guard added > 0 else {
            Terminal.writeError("aggregate: nothing to add: \(subscriptions.isEmpty ? "\(file) lists no feeds" : "every feed in \(file) is configured already")")
            return
        }
        if dryRun {
            context.stdout.write(sources.yaml(for: entries))
            return
        }
        try sources.addReporting(entries)
        Terminal.writeError("aggregate: added \(added) feed\(added == 1 ? "" : "s") to \(sources.config.file)\(skipped > 0 ? " (\(skipped) skipped)" : "")")
        if sources.config.defaultRefresh == nil, sources.template == nil {
            // Sixty blogs each polled at the cache TTL is not what anyone meant.
            Terminal.writeError("aggregate: serve refreshes each of them every \(SecondsFormat.text(SourceConfig.defaultCacheTTL)) (the cache TTL); "
                + "`defaults:` with `refresh: 1h` in \(sources.config.file) refreshes every source without its own hourly")
        }
    }
}

extension SourcesFile {
    /// ``add(_:)``, its failure said on stderr and turned into the exit status.
    func addReporting(_ entries: [NewSourceEntry]) throws {
        do {
            try add(entries)
            if template != nil { Terminal.writeError("aggregate: created \(config.file)") }
        } catch {
            Terminal.writeError("aggregate: \(error.description)")
            throw error.isUsage ? ExitStatus.usage.code : ExitStatus.failed.code
        }
    }
}

extension CommonOptions {
    /// The Sources.yml to add sources to, found and loaded; its problems said on stderr
    /// (exit 2).
    func sourcesFile(_ registry: SourceRegistry) throws -> SourcesFile {
        let loader = ConfigLoader(registry: registry)
        let path: String
        do {
            path = try loader.locate(explicitPath: config)
        } catch {
            guard case .missing = error, let made = config ?? loader.candidates().last else {
                Terminal.writeError(error.description)
                throw ExitStatus.usage.code
            }
            // None anywhere: a feed list from nothing, made where it is looked for
            // (--config, else $XDG_CONFIG_HOME/aggregate/Sources.yml) with the first entries.
            do {
                return try SourcesFile(making: made, loader: loader)
            } catch {
                Terminal.writeError("aggregate: \(error.description)")
                throw ExitStatus.usage.code
            }
        }
        return SourcesFile(path: path, config: try loadConfig(registry), loader: loader)
    }
}
