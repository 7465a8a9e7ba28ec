import ArgumentParser
import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import FeedState
import FeedSupport
import Foundation

/// `aggregate refresh`: fetch the sources and record what they answer in the card store,
/// printing nothing on stdout; for cron and systemd timers.
struct RefreshCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Fetch every enabled source (or --source ID) and record its cards in the card store.",
        discussion: """
            Each source is read within its budgets, as `aggregate --all` reads it; stderr and the \
            exit code are the feed command's. Cards a fallback served (cache or snapshot) are not \
            recorded as seen and mark nothing gone. Retention (keep:) is applied after. \
            See docs/card-store.md.
            """)

    @Option(name: .customLong("source"), help: ArgumentHelp("Only this source id (repeatable).", valueName: "id"))
    var sources: [String] = []

    @Option(name: .customLong("max-age"), help: ArgumentHelp(
        "Ask the upstream again when its cached answer is older than this many seconds (0: every source; default each source's cache_ttl). A timer's own interval is a good value.",
        valueName: "seconds"))
    var maxAge: Double?

    @OptionGroup var common: CommonOptions

    func validate() throws {
        if let maxAge, !(maxAge >= 0 && maxAge.isFinite) { throw ValidationError("--max-age is a number of seconds, 0 or more") }
    }

    func run(in context: CommandContext) async throws {
        let outcomes = try await common.withRunner(context.registry, stateRequired: true, maxAge: maxAge) { runner, config, state in
            // Each source is recorded as soon as it is read, while the others are fetched:
            // recording after the last one made a cold refresh of 500 feeds take 1.7× `--all`.
            let recorder = ListingRecorder(store: state?.cards)
            // A source whose upstream confirms what the store merged last is not read again.
            let storedTags = (try? await state?.cards.listingTags()) ?? [:]
            let collected = try await runner.collect(sources, storedTags: storedTags) { await recorder.record($0) }
            await recorder.finish()
            if let state { await common.purge(state.cards, config: config) }
            let fellBack = collected.outcomes.filter { if case .fallback = $0.status { true } else { false } }.count
            if await recorder.recorded.listings == 0, fellBack > 0, fellBack == collected.outcomes.count {
                // Offline, or every upstream down: say why the store did not grow.
                Terminal.writeError("aggregate: recorded nothing: no source answered live (each answered from its cache or recorded snapshot, which the card store does not record)")
            }
            if common.verbose {
                let (cards, listings, unchanged) = await recorder.recorded
                Terminal.writeError("aggregate: recorded \(cards) cards of \(listings) of \(collected.outcomes.count) sources"
                    + (unchanged > 0 ? " (\(unchanged) unchanged since the last refresh: their cards seen again)" : ""))
            }
            return (outcomes: collected.outcomes, recordingFailed: await recorder.failed)
        }
        common.report(outcomes.outcomes)
        // What was fetched and not recorded is a failed refresh, whatever the sources did.
        if outcomes.recordingFailed { throw ExitStatus.failed.code }
        let status = ExitStatus(RunStatus(outcomes: outcomes.outcomes, strict: common.strict))
        if status != .ok { throw status.code }
    }
}

/// `aggregate history ID`: the recorded changes of one card's tracked fields.
struct HistoryCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print the recorded changes of one card: price, regular price, title, stock.",
        discussion: "Text on a terminal, one line per change; --format jsonl gives {\"id\", \"field\", \"at\", \"before\", \"after\"} per change.")

    @Argument(help: ArgumentHelp("The card id, SOURCE:ID (e.g. cabify:MUG).", valueName: "card-id"))
    var cardID: String

    @Option(help: ArgumentHelp("text or jsonl (default: text on a terminal, jsonl otherwise).", valueName: "format"))
    var format: String?

    @OptionGroup var common: CommonOptions

    func validate() throws {
        if let format, !["text", "jsonl"].contains(format) {
            throw ValidationError("--format for history is text or jsonl, got \"\(format)\"")
        }
    }

    func run(in context: CommandContext) async throws {
        let (kept, changes) = try await common.withStore(context.registry) { store, _ in
            (try await store.card(id: cardID), try await store.history(of: cardID))
        }
        guard let kept else {
            Terminal.writeError("aggregate: no card \(cardID) in the card store; `aggregate --stored --all` lists the cards it keeps, `aggregate refresh` records what the sources list")
            throw ExitStatus.failed.code
        }
        let json = format == "jsonl" || (format == nil && !Terminal.stdoutIsTerminal)
        if json {
            context.stdout.write(changes.map { Self.line($0) + "\n" }.joined())
        } else {
            var text = "\(TerminalText.safe(kept.card.title)) (\(kept.card.id)), first seen \(Self.time(kept.dates.firstSeen))"
            if let gone = kept.dates.goneSince { text += ", gone since \(Self.time(gone))" }
            text += "\n"
            if changes.isEmpty { text += "no recorded changes\n" }
            let width = changes.map(\.field.rawValue.count).max() ?? 0
            for change in changes {
                text += "\(Self.time(change.at))  \(change.field.rawValue.padding(toLength: width, withPad: " ", startingAt: 0))  "
                    + "\(Self.text(change.before, change.field)) → \(Self.text(change.after, change.field))\n"
            }
            context.stdout.write(text)
        }
    }

    /// One change as a JSON line, keys sorted.
    static func line(_ change: CardChange) -> String {
        JSONLines.text(of: .object([
            "id": .string(change.id), "field": .string(change.field.rawValue), "at": .string(RFC3339.string(from: change.at)),
            "before": change.before, "after": change.after,
        ]))
    }

    static func time(_ date: Date) -> String {
        let text = RFC3339.string(from: date)
        // 2026-11-22T08:00:00Z → 2026-11-22 08:00 UTC
        return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(5)) + " UTC"
    }

    /// A value for people, made safe for a terminal; text quoted.
    static func text(_ value: JSONValue, _ field: TrackedField) -> String {
        if case .string(let text) = value { return "\"\(TerminalText.safe(text))\"" }
        return TerminalText.safe(field.words(for: value))
    }
}

/// `aggregate store`: what the card store keeps, per source.
struct StoreCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Print what the card store keeps per source: cards, gone cards, history rows, bytes.")

    @OptionGroup var common: CommonOptions

    func run(in context: CommandContext) async throws {
        let summary = try await common.withStore(context.registry) { store, _ in try await store.summary() }
        let rows = summary.map { [$0.source, "\($0.cards)", "\($0.gone)", "\($0.historyRows)", Self.bytes($0.bytes)] }
        let total = ["total", "\(summary.map(\.cards).reduce(0, +))", "\(summary.map(\.gone).reduce(0, +))",
                     "\(summary.map(\.historyRows).reduce(0, +))", Self.bytes(summary.map(\.bytes).reduce(0, +))]
        let table = [["source", "cards", "gone", "history", "bytes"]] + rows + (summary.count > 1 ? [total] : [])
        let widths = (0..<5).map { column in table.map { $0[column].count }.max() ?? 0 }
        let lines = table.map { row in
            zip(row, widths).enumerated().map { index, cell in
                index == 0 ? cell.0.padding(toLength: cell.1, withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: cell.1 - cell.0.count) + cell.0
            }.joined(separator: "  ")
        }
        context.stdout.write(lines.joined(separator: "\n") + "\n")
        if summary.isEmpty { Terminal.writeError("aggregate: the card store is empty; `aggregate refresh` records what the sources list") }
    }

    static func bytes(_ count: Int) -> String {
        count < 10_240 ? "\(count) B" : count < 10_485_760 ? "\(count / 1024) KiB" : "\(count / 1_048_576) MiB"
    }
}

extension CommonOptions {
    /// Runs `body` with the card store of the state, opened without the network.
    /// The store as the person the command line runs for (``person(in:)``) reads it.
    func withStore<T>(_ registry: SourceRegistry, _ body: (any CardStore, FeedConfig) async throws -> T) async throws -> T {
        try await withPersonalStores(registry) { stores, config in try await body(stores.cards, config) }
    }

    /// The same, with the person's marks and the search index beside the cards (`mark`, `search`).
    func withPersonalStores<T>(_ registry: SourceRegistry, _ body: (PersonalStores, FeedConfig) async throws -> T) async throws -> T {
        try await withOpenedState(registry, reading: "the card store") { state, config in
            let person = try await person(in: state.accounts)
            return try await body(PersonalStores(cards: state.cards.reading(as: person), marks: state.marks.marks(of: person),
                                                 search: state.search.searching(as: person), items: state.items), config)
        }
    }

    /// Whose marks the command line reads and writes: `--user`, else `$AGGREGATE_USER`,
    /// else the only account when there is exactly one (what they marked in the reader or
    /// an app is theirs here too), else the default person (no account, or several and
    /// none named). An unknown name is a usage error.
    func person(in accounts: any AccountStore, environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> Int {
        if let name = user ?? environment["AGGREGATE_USER"].flatMap({ $0.isEmpty ? nil : $0 }) {
            guard let account = try await accounts.account(named: name) else { throw UsageError(AccountError.noSuchUser(name).description) }
            return account.id
        }
        let all = try await accounts.accounts()
        return all.count == 1 ? all[0].id : StoreUser.default
    }

    /// Runs `body` with the state opened without the network; a ``UsageError`` or an
    /// ``AccountError`` is a usage error (exit 2), anything else says it cannot read `what` (exit 1).
    func withOpenedState<T>(_ registry: SourceRegistry, reading what: String, _ body: (EngineState, FeedConfig) async throws -> T) async throws -> T {
        let config = try loadConfig(registry)
        guard let state = try await openState(config, required: true, connections: .one, cardStoreOnly: true) else { throw ExitStatus.failed.code }
        do {
            let value = try await body(state, config)
            await state.close()
            return value
        } catch let usage as UsageError {
            await state.close()
            Terminal.writeError("aggregate: \(usage)")
            throw ExitStatus.usage.code
        } catch let error as AccountError {
            await state.close()
            Terminal.writeError("aggregate: \(error)")
            throw ExitStatus.usage.code
        } catch {
            await state.close()
            Terminal.writeError("aggregate: cannot read \(what): \(PlainWords.describe(error))")
            throw ExitStatus.failed.code
        }
    }

    /// Applies retention (`keep:`) in batches of ``CardRetention/batch``, so that a reader waits
    /// for one small transaction at most. After each full batch it pauses as long as the
    /// batch took, as autovacuum's cost delay does: a large purge (100,000 cards gone at
    /// once) takes at most half a core from a `serve` answering readers on the same
    /// machine, and twice as long, which nobody waits on.
    func purge(_ store: any CardStore, config: FeedConfig, now: Date = Date()) async {
        let policies = Dictionary(uniqueKeysWithValues: config.sources.map { ($0.id, $0.keep) })
        let fallback = config.keep
        do {
            while true {
                let started = ContinuousClock.now
                guard try await store.purge({ policies[$0] ?? fallback }, now: now, limit: CardRetention.batch) == CardRetention.batch else { break }
                try? await Task.sleep(for: started.duration(to: .now))
            }
        } catch {
            Terminal.writeError("aggregate: warning: cannot apply keep: to the card store (\(PlainWords.describe(error)))")
        }
    }

}


/// The kept cards as the person the command line runs for sees them: the cards (with their
/// marks in their dates), their marks, and the search over them.
struct PersonalStores {
    let cards: any CardStore
    let marks: any ReadingMarkStore
    let search: any CardSearchIndex
    /// Everyone's decisions on which cards are one item.
    let items: any ItemDecisionStore
}
