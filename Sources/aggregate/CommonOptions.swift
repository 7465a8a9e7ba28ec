import ArgumentParser
import FeedCore
import FeedEngine
import Foundation
import Logging
import SourceCatalogue

extension SortKey: ExpressibleByArgument {}
extension SortDirection: ExpressibleByArgument {}
extension Card.Kind: ExpressibleByArgument {}

/// A `--format` value: a name from the one list of formats, ``CardFormats``.
struct FormatChoice: ExpressibleByArgument {
    let type: any CardFormat.Type

    init?(argument: String) {
        guard let type = CardFormats.named(argument) else { return nil }
        self.type = type
    }

    static var allValueStrings: [String] { CardFormats.names }
    var name: String { type.name }
}

/// How cards are printed: `feed`, `show` and `sources` take it.
struct CardFormatOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Output format: \(CardFormats.names.joined(separator: ", ")) (default: text on a terminal, jsonl otherwise).",
                               valueName: "format"))
    var format: FormatChoice?

    var formatType: any CardFormat.Type { format?.type ?? (Terminal.stdoutIsTerminal ? TextFormat.self : JSONLinesFormat.self) }

    /// For a feed format, when `store` first saw each undated card (feed readers need a
    /// date that does not move); nothing for the other formats.
    func firstSeen(_ cards: [Card], store: StateStore?) -> [String: Date] {
        guard formatType.isFeed, let store else { return [:] }
        do {
            return try store.firstSeen(cards.filter { $0.published == nil }.map(\.id))
        } catch {
            Terminal.writeError("aggregate: cannot record when cards were first seen (\(PlainWords.describe(error))); undated entries carry the feed's date")
            return [:]
        }
    }

    /// Prints `cards` on stdout in the chosen format, streamed in chunks as it is written.
    func print(_ cards: [Card], info: FeedInfo = FeedInfo(), firstSeen: [String: Date] = [:]) {
        let document = FeedDocument(cards: cards, info: info, width: Terminal.width, color: Terminal.useColor,
                                    firstSeen: firstSeen)
        var out = FormattedOutput(sink: Terminal.write(bytes:))
        formatType.init().write(document, to: &out)
        out.finish()
    }
}

/// Options every command takes, after its name.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The sources file.", discussion: "Default: ./Sources.yml, else $XDG_CONFIG_HOME/aggregate/Sources.yml.",
        valueName: "path"))
    var config: String?

    @Flag(help: "Open no socket: serve every source from the cache, else its recorded snapshot.")
    var offline = false

    @Flag(help: "Exit 3 when any source was served from a fallback instead of live.")
    var strict = false

    @Flag(help: "Ignore the cache's freshness: ask every upstream again (still revalidating with ETag).")
    var refresh = false

    @Option(name: .long, help: ArgumentHelp(
        "Where the cache and state database lives.", discussion: "Default: $XDG_CACHE_HOME/aggregate (~/.cache/aggregate).",
        valueName: "dir"))
    var stateDir: String?

    @Flag(name: [.short, .long], help: "Say more on stderr: per-source counts, notes, budgets.")
    var verbose = false

    /// Loads and validates the configuration; prints every problem and exits 2 if any.
    func loadConfig() throws -> FeedConfig {
        let loader = ConfigLoader(registry: SourceRegistry(SourceCatalogue.feedSources))
        do {
            return try loader.load(path: try loader.locate(explicitPath: config))
        } catch {
            Terminal.writeError(error.description)
            throw ExitStatus.usage.code
        }
    }

    var logger: Logger {
        Logger(label: "aggregate") { _ in StderrLogHandler(logLevel: verbose ? .info : .notice) }
    }

    /// The state database; a run without one still works, uncached, and says so.
    func openStore() -> StateStore? {
        let directory = stateDir.map { URL(fileURLWithPath: $0) } ?? StateStore.defaultDirectory()
        do {
            let store = try StateStore(directory: directory)
            store.notices.forEach(Terminal.writeError)
            return store
        } catch {
            Terminal.writeError("aggregate: running without a cache: cannot open the state in \(directory.path) (\(PlainWords.describe(error)))")
            return nil
        }
    }

    /// Runs `body` with the transports of this run and shuts the network down after.
    func withRunner<T>(_ body: (FeedRunner) async throws -> T) async throws -> T {
        try await withRunner(store: openStore()) { runner, _ in try await body(runner) }
    }

    /// The same, for commands that need the store themselves.
    func withRunner<T>(store: StateStore?, sharedRequests: SharedRequests? = nil,
                       _ body: (FeedRunner, FeedConfig) async throws -> T) async throws -> T {
        let config = try loadConfig()
        let live = offline ? nil : LiveHTTPTransport()
        let transports = StandardTransports(live: live, store: store, refresh: refresh, logger: logger,
                                            sharedSnapshots: { SourceCatalogue.feedSources.flatMap { $0.snapshots } },
                                            sharedRequests: sharedRequests)
        let runner = FeedRunner(config: config, registry: SourceRegistry(SourceCatalogue.feedSources), transports: transports)
        do {
            let result = try await body(runner, config)
            await live?.shutdown()
            return result
        } catch {
            await live?.shutdown()
            if let usage = error as? UsageError {
                Terminal.writeError("aggregate: \(usage)")
                throw ExitStatus.usage.code
            }
            throw error
        }
    }

    func report(_ outcomes: [SourceOutcome]) {
        for line in outcomes.flatMap({ $0.messages(verbose: verbose) }) {
            Terminal.writeError(line)
        }
    }
}
