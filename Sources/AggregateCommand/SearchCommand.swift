import ArgumentParser
import FeedEngine
import FeedFormats
import FeedState
import Foundation

/// `aggregate search QUERY`: every card the card store keeps, searched and ranked.
struct SearchCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search every card the card store keeps: words, \"phrases\", -excluded, source:ID, kind:KIND, price<100.",
        discussion: """
            Title matches first, then the newest. Gone cards are found too (with gone_since). \
            The query language is in docs/search.md. Quote a query with a leading-dash word (else \
            it is read as an option): `aggregate search 'red shirt -kids price<30'`.
            """)

    @Argument(help: ArgumentHelp("The query, as one argument or several.", valueName: "query"))
    var words: [String] = []

    @Option(name: .customLong("source"), help: ArgumentHelp("Only this source id (repeatable), as source:ID in the query.", valueName: "id"))
    var sources: [String] = []

    @OptionGroup var paging: PagingOptions

    @OptionGroup var common: CommonOptions
    @OptionGroup var output: CardFormatOptions

    func validate() throws {
        _ = try search()
    }

    /// The query of the words and `--source`s.
    func search() throws -> CardSearch {
        do {
            var search = try CardSearch(parsing: words.joined(separator: " "))
            search.sources += sources
            return search
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run(in context: CommandContext) async throws {
        let search = try search()
        let (page, perPage) = (paging.page, paging.perPage)
        let limit = paging.all ? Int.max : perPage
        let offset = paging.all ? 0 : (page - 1) * perPage
        let (found, config, empty) = try await common.withPersonalStores(context.registry) { stores, config in
            let found = try await stores.search.search(search, offset: offset, limit: limit)
            // Nothing found in a store that never recorded anything says why: asked of the
            // sources' counters (one small table), not of a summary that reads every card
            // (1.4 s of a search that found nothing at a million cards).
            return (found, config, found.total == 0 ? try await stores.cards.versions().isEmpty : false)
        }
        let dates = Dictionary(found.cards.map { ($0.card.id, $0.dates) }, uniquingKeysWith: { first, _ in first })
        output.print(FeedCards(found.cards.map(\.card)), to: context.stdout, info: config.feed, firstSeen: dates.mapValues(\.firstSeen), kept: dates)
        if found.cards.isEmpty {
            if found.total > 0 {
                let pages = (found.total + perPage - 1) / perPage
                Terminal.writeError("aggregate: page \(page) is past the end: there \(pages == 1 ? "is 1 page" : "are \(pages) pages") (\(found.total) cards at \(perPage) per page)")
            } else if empty {
                Terminal.writeError("aggregate: the card store is empty: `aggregate refresh` records what the sources answer live (a recorded snapshot or cached copy is not recorded)")
            } else {
                Terminal.writeError("aggregate: no card in the card store matches: \(TerminalText.safe(words.joined(separator: " ")))")
            }
        }
    }
}
