import ArgumentParser
import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import FeedServer
import FeedState
import FeedSupport
import Foundation
import Logging

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

    /// For a feed format, when each undated card was first seen (feed readers need a date
    /// that does not move): the card store's time for the cards it keeps, and for the others
    /// `now`, the time this run records them at. Nothing for the other formats.
    func firstSeen(_ cards: FeedCards, state: EngineState?, now: Date) async -> [String: Date] {
        guard formatType.isFeed, let state else { return [:] }
        let undated = cards.indices.filter { cards.published(at: $0) == nil }.map { cards.id(at: $0) }
        guard !undated.isEmpty else { return [:] }
        var seen: [String: Date] = [:]
        do {
            seen = try await state.cards.firstSeen(of: undated)
        } catch {
            Terminal.writeError("aggregate: cannot read when cards were first seen (\(PlainWords.describe(error))); undated entries carry this run's time")
        }
        for id in undated where seen[id] == nil { seen[id] = now }
        return seen
    }

    /// Prints `cards` on stdout in the chosen format, streamed in chunks as it is written.
    /// `showsDates`: the cards are ordered by date, and the text view says each one's.
    func print(_ cards: FeedCards, to stdout: StandardOutput, info: FeedInfo = FeedInfo(), firstSeen: [String: Date] = [:],
               kept: [String: KeptDates] = [:], showsDates: Bool = false) {
        var document = FeedDocument(cards: cards, info: info, width: Terminal.width, color: Terminal.useColor,
                                    firstSeen: firstSeen)
        document.kept = kept
        document.showsDates = showsDates
        var out = FormattedOutput(sink: stdout.write(bytes:))
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

    @Option(name: .customLong("state"), help: ArgumentHelp(
        "Where the cache and digest state live: a directory (SQLite) or postgres://user:password@host:5432/database.",
        discussion: "Default: $AGGREGATE_STATE, else the state: key of Sources.yml, else $XDG_STATE_HOME/aggregate (~/.local/state/aggregate) with the HTTP cache in $XDG_CACHE_HOME/aggregate (~/.cache/aggregate).",
        valueName: "dir-or-url"))
    var state: String?

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("The same as --state, for a directory.", valueName: "dir"))
    var stateDir: String?

    @Flag(name: [.short, .long], help: "Say more on stderr: per-source counts, notes, budgets.")
    var verbose = false

    @Option(name: .customLong("user"), help: ArgumentHelp(
        "Whose read and starred cards to read and mark (else $AGGREGATE_USER, else the only user when there is exactly one).",
        valueName: "name"))
    var user: String?

    /// Loads and validates the configuration; prints every problem and exits 2 if any.
    func loadConfig(_ registry: SourceRegistry) throws -> FeedConfig {
        let loader = ConfigLoader(registry: registry)
        do {
            let path = try loader.locate(explicitPath: config)
            if verbose, config == nil {
                // A ./Sources.yml in the working directory quietly comes before the one in
                // ~/.config: say which was read when both are there.
                let hidden = loader.candidates().filter { $0 != path && FileManager.default.fileExists(atPath: $0) }
                if !hidden.isEmpty {
                    Terminal.writeError("aggregate: reading \(path); \(hidden.joined(separator: ", ")) is not read (pass --config to choose)")
                }
            }
            return try loader.load(path: path)
        } catch {
            Terminal.writeError(error.description)
            throw ExitStatus.usage.code
        }
    }

    /// How `serve` reads the configuration again (the file ``loadConfig(_:)`` found).
    func configReload(_ registry: SourceRegistry, http: LiveHTTPTransport?) -> ConfigReload? {
        let loader = ConfigLoader(registry: registry)
        guard let path = try? loader.locate(explicitPath: config) else { return nil }
        return ConfigReload(path: path, loader: loader, http: http)
    }

    var logger: Logger {
        Logger(label: "aggregate") { _ in StderrLogHandler(logLevel: verbose ? .info : .notice) }
    }

    /// Where the state lives: `--state`/`--state-dir`, else `AGGREGATE_STATE`, else the
    /// `state:` key of Sources.yml, else the default directory.
    func stateLocation(_ config: FeedConfig, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> StateLocation {
        if state != nil && stateDir != nil {
            Terminal.writeError("aggregate: give --state or --state-dir, not both")
            throw ExitStatus.usage.code
        }
        // An empty value (a script's `$(mktemp -d)` that failed) would be the current directory.
        for (option, value) in [("--state", state), ("--state-dir", stateDir)] where value?.trimmingCharacters(in: .whitespaces).isEmpty == true {
            Terminal.writeError("aggregate: \(option) is empty: give a directory or a postgres:// URL (an empty one would put the state in the current directory)")
            throw ExitStatus.usage.code
        }
        if let stateDir { return .directory(URL(fileURLWithPath: stateDir)) }
        if let text = state ?? environment["AGGREGATE_STATE"].flatMap({ $0.isEmpty ? nil : $0 }) {
            do {
                return try StateLocation(parsing: text)
            } catch {
                Terminal.writeError("aggregate: \(state != nil ? "--state" : "AGGREGATE_STATE"): \(error)")
                throw ExitStatus.usage.code
            }
        }
        return config.state ?? StateLocation.defaultLocation(environment: environment)
    }

    /// Opens the state. A directory that cannot be used leaves the run uncached (it says
    /// so), unless `required`; a database that cannot be reached ends the run with exit 1:
    /// whoever names a shared store relies on it.
    func openState(_ config: FeedConfig, required: Bool, connections: StateConnections, cardStoreOnly: Bool = false) async throws -> EngineState? {
        let location = try stateLocation(config)
        do {
            let state = cardStoreOnly ? try await EngineState.openForCardStore(location)
                : try await EngineState.open(location, connections: connections)
            state.notices.forEach(Terminal.writeError)
            return state
        } catch {
            if case .directory = error, !required {
                Terminal.writeError("aggregate: running without a cache: \(error)")
                return nil
            }
            Terminal.writeError("aggregate: \(error)")
            throw ExitStatus.failed.code
        }
    }

    /// Runs `body` with the transports of this run and shuts the network down after.
    func withRunner<T>(_ registry: SourceRegistry, _ body: (FeedRunner) async throws -> T) async throws -> T {
        try await withRunner(registry) { runner, _, _ in try await body(runner) }
    }

    /// The same, for commands that need the configuration and the state themselves.
    /// A server reads the state in parallel (`stateConnections: .pool`); a run needs one connection.
    /// `recording: false` (`--no-record`): no source's answer is recorded this run, as if
    /// each said `record: false`.
    func withRunner<T>(_ registry: SourceRegistry, sharedRequests: SharedRequests? = nil, stateRequired: Bool = false,
                       stateConnections: StateConnections = .one, recording: Bool = true, maxAge: Double? = nil,
                       _ body: (FeedRunner, FeedConfig, EngineState?) async throws -> T) async throws -> T {
        var config = try loadConfig(registry)
        guard !config.sources.isEmpty else {
            // A list started from nothing: say how to fill it, not an empty page.
            Terminal.writeError("aggregate: \(config.file) lists no sources yet: add a feed with `aggregate add URL` or `aggregate import FILE.opml`")
            throw ExitStatus.usage.code
        }
        if !recording { config.sources = config.sources.map { var source = $0; source.record = false; return source } }
        if let maxAge {
            // `refresh --max-age`: no cached answer older than this serves as fresh.
            config.sources = config.sources.map { var source = $0; source.cacheTTL = min(source.cacheTTL, maxAge); return source }
        }
        if verbose && !JSONBody(environment: ProcessInfo.processInfo.environment).usesTape {
            Terminal.writeError("aggregate: JSON bodies are decoded by Foundation's JSONDecoder alone (AGGREGATE_JSON_DECODER=foundation)")
        }
        let state = try await openState(config, required: stateRequired, connections: stateConnections)
        let live = offline ? nil : LiveHTTPTransport()
        let transports = StandardTransports(live: live, state: state, refresh: refresh, logger: logger,
                                            sharedSnapshots: { registry.types.flatMap { $0.snapshots } },
                                            sharedRequests: sharedRequests)
        let runner = FeedRunner(config: config, registry: registry, transports: transports)
        do {
            let result = try await body(runner, config, state)
            await transports.finishWrites()
            await live?.shutdown()
            await state?.close()
            return result
        } catch {
            await transports.finishWrites()
            await live?.shutdown()
            await state?.close()
            if let usage = error as? UsageError {
                Terminal.writeError("aggregate: \(usage)")
                throw ExitStatus.usage.code
            }
            throw error
        }
    }

    /// The runners of `serve`: one for readers, which serves any cached copy however old,
    /// and (online) one that revalidates every source in the background. They share the
    /// network, the state and the requests in flight.
    func withServeRunners<T>(_ registry: SourceRegistry, background: Bool, _ body: (FeedRunner, FeedRunner?, FeedConfig, EngineState?) async throws -> T) async throws -> T {
        let config = try loadConfig(registry)
        let state = try await openState(config, required: false, connections: .pool)
        let live = offline ? nil : LiveHTTPTransport()
        let shared = SharedRequests()
        let snapshots: @Sendable () -> [RecordedResponse] = { registry.types.flatMap { $0.snapshots } }
        let background = background && live != nil
        let readers = StandardTransports(live: live, state: state, refresh: refresh, servesStale: background && !refresh, logger: logger,
                                         sharedSnapshots: snapshots, sharedRequests: shared, fetchesArticles: !background)
        let refreshes = StandardTransports(live: live, state: state, refresh: true, logger: logger,
                                           sharedSnapshots: snapshots, sharedRequests: shared)
        let runner = FeedRunner(config: config, registry: registry, transports: readers)
        let refresher = background ? FeedRunner(config: config, registry: registry, transports: refreshes) : nil
        func finish() async {
            await readers.finishWrites()
            await refreshes.finishWrites()
            await live?.shutdown()
            await state?.close()
        }
        do {
            let result = try await body(runner, refresher, config, state)
            await finish()
            return result
        } catch {
            await finish()
            throw error
        }
    }

    func report(_ outcomes: [SourceOutcome]) {
        for line in outcomes.flatMap({ $0.messages(verbose: verbose) }) {
            Terminal.writeError(line)
        }
    }
}
