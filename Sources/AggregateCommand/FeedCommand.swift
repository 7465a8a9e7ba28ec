import ArgumentParser
import FeedCore
import FeedEngine
import FeedFormats
import FeedState
import FeedSupport
import SameItem

/// `aggregate [feed]`: one page of the merged feed.
struct FeedCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "feed",
        abstract: "Print one page of the merged feed (the default command).")

    @Option(name: .customLong("source"), help: ArgumentHelp("Only this source id (repeatable).", valueName: "id"))
    var sources: [String] = []

    @Option(help: "Sort by feed (round-robin in config order), date, price, title or source.")
    var sort: SortKey = .feed

    @Option(help: "asc or desc (default: desc for date, asc otherwise).")
    var order: SortDirection?

    @OptionGroup var paging: PagingOptions
    var page: Int { paging.page }
    var perPage: Int { paging.perPage }
    var all: Bool { paging.all }

    @Option(help: ArgumentHelp("Only cards of this kind: deal, product, post, person or item.", valueName: "kind"))
    var kind: Card.Kind?

    @Option(help: ArgumentHelp("Only cards whose title or summary contains this text (any case, any accents).",
                               valueName: "text"))
    var query: String?

    @Flag(help: "Answer from the card store alone: no upstream is asked, gone cards are included, each with first_seen, last_seen and gone_since.")
    var stored = false

    @Flag(help: "Only the cards not yet read, from the card store (implies --stored).")
    var unread = false

    @Flag(help: "Only the starred cards, from the card store (implies --stored).")
    var starred = false

    /// The cards the reading marks keep: `--unread`, `--starred`.
    var reading: ReadingFilter? {
        unread ? .unread : starred ? .starred : nil
    }

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "One card per item across sources: the same link, product code or story (default: Sources.yml's merge:).",
        discussion: "See docs/same-item.md; `aggregate same`, `apart` and `item` correct and explain it."))
    var merge: Bool?

    @Flag(name: .customLong("no-record"), help: "Do not record what the upstreams answered in the card store.")
    var noRecord = false

    @OptionGroup var common: CommonOptions
    @OptionGroup var output: CardFormatOptions

    func validate() throws {
        if unread && starred {
            throw ValidationError("--unread and --starred are two views: give one (`aggregate mark` changes what they hold)")
        }
        if let reading, common.offline || common.refresh {
            throw ValidationError("--\(reading.rawValue) reads the card store and asks no upstream: leave out --offline and --refresh")
        }
        if stored && (common.offline || common.refresh) {
            throw ValidationError("--stored asks no upstream: leave out --offline and --refresh")
        }
    }

    func run(in context: CommandContext) async throws {
        let query = FeedQuery(sourceIDs: sources, sort: sort, order: order, page: page,
                              perPage: all ? FeedQuery.everyCard : perPage, kind: kind, text: query)
        if stored || reading != nil { return try await runStored(query, in: context) }
        // Printed inside: the cache writes and the recording finish behind the output, not before it.
        let result = try await common.withRunner(context.registry, recording: !noRecord) { runner, config, state in
            var query = query
            query.merge = try await ItemDecisions.asked(merge, config: config, store: state?.items)
            // Each source is recorded as soon as it is read, on the other core, while the
            // rest are read, merged and printed (after the run, it was most of a first run).
            let recorder = ListingRecorder(store: state?.cards) { reason in
                "aggregate: warning: cannot record the cards in the card store (\(reason)); what was printed is unchanged"
            }
            let at = FeedRunner.wholeSecond()
            let result = try await runner.run(query, at: at) { await recorder.record($0) }
            // A new card is first seen at the run's time, which is what the recording writes.
            let firstSeen = await output.firstSeen(result.cards, state: state, now: at)
            // A paged run's listings: recorded while this core prints.
            for listing in result.listings { await recorder.record(listing) }
            output.print(result.cards, to: context.stdout, info: config.feed, firstSeen: firstSeen, showsDates: sort == .date)
            await recorder.finish()
            return result
        }
        common.report(result.outcomes)
        if result.duplicatesDropped > 0 && common.verbose {
            Terminal.writeError("aggregate: dropped \(result.duplicatesDropped) duplicate card(s)")
        }
        if result.cards.isEmpty, let pages = result.pageCount {
            if result.matched > 0 {
                Terminal.writeError("aggregate: page \(page) is past the end: there \(pages == 1 ? "is 1 page" : "are \(pages) pages") (\(result.matched) cards at \(perPage) per page)")
            } else if !result.outcomes.allSatisfy({ $0.failure != nil }) {
                Terminal.writeError("aggregate: no cards\(query.kind != nil || query.text != nil ? " match the filters" : "")")
            }
        }
        let status = ExitStatus(RunStatus(outcomes: result.outcomes, strict: common.strict))
        keepUntilExit(result)
        if status != .ok { throw status.code }
    }

    /// `--stored`: the same query over the card store, opened without the network.
    private func runStored(_ query: FeedQuery, in context: CommandContext) async throws {
        let (result, dates, config) = try await common.withPersonalStores(context.registry) { stores, config in
            let store = stores.cards
            var query = query
            query.merge = try await ItemDecisions.asked(merge, config: config, store: stores.items)
            let sources = try FeedRunner.select(query.sourceIDs, in: config)
            // A page the store makes from its indexes costs a page, however many it keeps.
            if let request = FeedRunner.storedPage(query, sources: sources.map(\.id), reading: reading) {
                var page = try await store.page(request)
                if let decisions = query.merge {
                    // As the reader's pages: each item once where its first copy on the page
                    // is, its copies found by key (written with the search rows: brought up
                    // to date first, as a search does).
                    _ = try await stores.search.updateSearch()
                    let order = Dictionary(config.sources.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
                    page.cards = try await ItemsOnPage(index: stores.search, store: store, decisions: decisions, sourceOrder: order).merged(page.cards)
                }
                let dates = Dictionary(page.cards.map { ($0.card.id, $0.dates) }, uniquingKeysWith: { first, _ in first })
                return (FeedRunner.stored(page, query: query, sources: sources), dates, config)
            }
            // A filter or an order no index keeps (title, source): every kept card of the sources.
            var kept = try await store.cards(of: sources.map(\.id))
            if let reading { kept.removeAll { !reading.includes($0.dates) } }
            let result = try FeedRunner.stored(kept.map(\.card), config: config, query: query)
            var dates: [String: KeptDates] = [:]
            let shown = Set(result.cards.map(\.id))
            for card in kept where shown.contains(card.card.id) { dates[card.card.id] = card.dates }
            return (result, dates, config)
        }
        output.print(result.cards, to: context.stdout, info: config.feed, firstSeen: dates.mapValues(\.firstSeen), kept: dates,
                     showsDates: query.sort == .date)
        if result.cards.isEmpty {
            if result.matched > 0, let pages = result.pageCount {
                Terminal.writeError("aggregate: page \(page) is past the end: there \(pages == 1 ? "is 1 page" : "are \(pages) pages") (\(result.matched) cards at \(perPage) per page)")
            } else if let reading {
                Terminal.writeError("aggregate: no \(reading.rawValue) cards\(query.filters ? " match the filters" : "") in the card store")
            } else {
                Terminal.writeError("aggregate: no cards\(query.filters ? " match the filters" : "") in the card store; `aggregate refresh` records what the sources list")
            }
        }
    }
}

/// `--page`, `--per-page`, `--all`: which cards of an ordered list are printed.
struct PagingOptions: ParsableArguments {
    // `.unconditional` so `--page -1` reaches validate() and gets a plain sentence.
    @Option(parsing: .unconditional, help: "Page number, from 1.")
    var page = 1

    @Option(parsing: .unconditional, help: "Cards per page, 1 to \(FeedQuery.maxPerPage).")
    var perPage = 20

    @Flag(help: "Print every matching card in the chosen order, not one page (budgets still apply).")
    var all = false

    func validate() throws {
        if all && (page != 1 || perPage != 20) {
            throw ValidationError("--all prints every card: leave out --page and --per-page")
        }
        guard (1...FeedQuery.maxPage).contains(page) else {
            throw ValidationError("--page must be between 1 and \(FeedQuery.maxPage), got \(page)")
        }
        guard (1...FeedQuery.maxPerPage).contains(perPage) else {
            throw ValidationError("--per-page must be between 1 and \(FeedQuery.maxPerPage), got \(perPage)")
        }
    }
}

/// Keeps `value` alive until the process ends: freeing the cards of a 13,750-card dump
/// one field at a time took a tenth of the run, and the system takes the memory back at
/// exit anyway.
func keepUntilExit<T>(_ value: T) {
    _ = Unmanaged.passRetained(Retained(value))
}

private final class Retained<T> {
    let value: T

    init(_ value: T) {
        self.value = value
    }
}
