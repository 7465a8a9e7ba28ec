import ArgumentParser
import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import FeedSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `aggregate add URL`: a feed, or a web page that advertises one, as a new `plugin: feed`
/// entry at the end of Sources.yml, through the same checked writer as `import`; a page
/// that advertises none but describes itself (JSON-LD, microdata, OpenGraph) is offered as
/// a `plugin: html` source, with the first cards it would make.
struct AddCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a feed to Sources.yml: its URL, or a web page that advertises it.",
        discussion: """
            The URL is fetched once. A feed (RSS, Atom, JSON Feed) is added under an id made from its title; a \
            web page is searched for the feeds it advertises (<link rel="alternate">): one is added, several are \
            listed to choose from (on a terminal you are asked; elsewhere pass --pick N). A page with no feed whose \
            structured data (JSON-LD, microdata, OpenGraph) makes cards — a shop's product page — is offered as a \
            `plugin: html` source with the first cards it would make (on a terminal you are asked; elsewhere pass \
            --html). A URL already configured adds nothing. The file keeps its text and comments; the entry is \
            checked before it is written.
            """)

    @Argument(help: ArgumentHelp("The feed's URL, or a web page that links to its feed.", valueName: "url"))
    var url: String

    @Option(help: ArgumentHelp("The source's id (default: made from the feed's title).", valueName: "id"))
    var id: String?

    @Option(help: ArgumentHelp("The name people see (default: the feed's title).", valueName: "name"))
    var name: String?

    @Option(name: .customLong("tag"), help: ArgumentHelp("A folder for OPML exports (repeatable): the tags option.", valueName: "tag"))
    var tags: [String] = []

    @Option(help: ArgumentHelp("Of the feeds a page advertises, take the Nth (as listed).", valueName: "n"))
    var pick: Int?

    @Flag(help: "Add a page with no feed as a plugin: html source, by its structured data.")
    var html = false

    @Flag(help: "Print the entry instead of adding it.")
    var dryRun = false

    @OptionGroup var common: CommonOptions

    func run(in context: CommandContext) async throws {
        guard let address = URL(string: url), address.isWebAddress else {
            Terminal.writeError("aggregate: add: \"\(url)\" is not a web address; give the feed's or its page's http:// or https:// URL")
            throw ExitStatus.usage.code
        }
        if let id, !ConfigLoader.isValidID(id) {
            Terminal.writeError("aggregate: add: \"\(id)\" is not a valid id: use lowercase letters, digits and -, starting with a letter or digit")
            throw ExitStatus.usage.code
        }
        if let pick, pick < 1 {
            Terminal.writeError("aggregate: add: --pick counts from 1")
            throw ExitStatus.usage.code
        }
        guard let plugin = context.registry.types.lazy.compactMap({ $0 as? any SubscribableSource.Type }).first else {
            Terminal.writeError("aggregate: add: this build has no feed plugin")
            throw ExitStatus.usage.code
        }
        let sources = try common.sourcesFile(context.registry)
        if let existing = sources.configuredID(for: address) {
            Terminal.writeError("aggregate: \(address.redactedString) is already configured as \(existing); nothing added")
            return
        }
        if let id, sources.config.source(id: id) != nil {
            Terminal.writeError("aggregate: add: the id \(id) is taken in \(sources.config.file); pass another --id")
            throw ExitStatus.usage.code
        }

        let http = LiveHTTPTransport()
        let found: FeedFinder.Found
        do {
            found = try await FeedFinder(plugin: plugin, http: http).find(address) { feeds, page in try choose(from: feeds, page: page, sources: sources) }
            await http.shutdown()
        } catch let failure as FeedFinder.Failure {
            if case .notAFeed(let page, _) = failure, let described = await pageCards(page, http: http, registry: context.registry) {
                await http.shutdown()
                return try offerPage(page, as: described.plugin, cards: described.cards, sources: sources, context: context)
            }
            await http.shutdown()
            Terminal.writeError("aggregate: add: \(failure)")
            if case .notAFeed = failure { throw ExitStatus.usage.code }
            throw ExitStatus.failed.code
        } catch {
            await http.shutdown()
            throw error
        }
        if let existing = sources.configuredID(for: found.url) {
            Terminal.writeError("aggregate: \(found.url.redactedString) is already configured as \(existing); nothing added")
            return
        }
        let title = name ?? found.title
        let newID = id ?? SourcesFileEdit.id(from: title ?? found.url.host ?? "feed", taken: Set(sources.config.sources.map(\.id)))
        let entry = NewSourceEntry(id: newID, name: title, plugin: plugin.plugin, url: found.url, tags: tags,
                                   comment: found.url == address ? nil : "advertised by \(address.redactedString)")
        if dryRun {
            context.stdout.write(sources.yaml(for: [entry]))
            return
        }
        try sources.addReporting([entry])
        Terminal.writeError("aggregate: added \(newID)\(title.map { " (\($0))" } ?? "") to \(sources.config.file): \(found.url.redactedString)")
    }

    /// The ``PageSource`` plugin and the cards it makes of `page` without options (nil when
    /// this build has none, or it makes no card).
    private func pageCards(_ page: URL, http: LiveHTTPTransport, registry: SourceRegistry) async -> (plugin: any PageSource.Type, cards: [Card])? {
        guard let type = registry.types.lazy.compactMap({ $0 as? any PageSource.Type }).first else { return nil }
        let settings = SourceSettings(id: "page", url: page, options: nil, environment: [:], json: JSONBody.tape)
        guard let source = try? type.init(settings: settings, http: TimedTransport(live: http, timeout: FeedFinder.timeout)),
              let cards = try? await source.page(after: nil).cards, !cards.isEmpty else { return nil }
        return (type, cards)
    }

    /// Shows what `page` would give as a `plugin: html` source and adds it: with `--html`,
    /// or when the person at the terminal says so.
    private func offerPage(_ page: URL, as plugin: any PageSource.Type, cards: [Card], sources: SourcesFile, context: CommandContext) throws {
        var offer = "\(page.redactedString) advertises no feed, but describes itself: a plugin: html source would make \(cards.count) card\(cards.count == 1 ? "" : "s")"
        for card in cards.prefix(3) {
            offer += "\n  \(TerminalText.safe(card.title))" + (card.price.map { " — \(TerminalText.safe($0.label))" } ?? "")
        }
        if cards.count > 3 { offer += "\n  …" }
        Terminal.writeError("aggregate: add: " + offer)
        var accepted = html
        if !accepted {
            guard isatty(STDIN_FILENO) == 1, isatty(STDERR_FILENO) == 1 else {
                Terminal.writeError("aggregate: add: pass --html to add it as a web-page source (nothing was added)")
                throw ExitStatus.usage.code
            }
            FileHandle.standardError.write(Data("Add it as a web-page source? [y/N] ".utf8))
            accepted = readLine()?.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix("y") == true
            guard accepted else { return }
        }
        let title = name ?? (cards.count == 1 ? cards[0].title : nil)
        let newID = id ?? SourcesFileEdit.id(from: title ?? page.host ?? "page", taken: Set(sources.config.sources.map(\.id)))
        let entry = NewSourceEntry(id: newID, name: title, plugin: plugin.plugin, url: page, tags: tags, comment: "a web page, by its structured data")
        if dryRun {
            context.stdout.write(sources.yaml(for: [entry]))
            return
        }
        try sources.addReporting([entry])
        Terminal.writeError("aggregate: added \(newID)\(title.map { " (\(TerminalText.safe($0)))" } ?? "") to \(sources.config.file): \(page.redactedString)")
    }

    /// One of the feeds a page advertises: the only one, the `--pick`ed one, or the one
    /// the person at the terminal chooses.
    private func choose(from feeds: [AdvertisedFeed], page: URL, sources: SourcesFile) throws -> AdvertisedFeed {
        if let pick {
            guard pick <= feeds.count else {
                Terminal.writeError("aggregate: add: \(page.redactedString) advertises \(feeds.count) feed\(feeds.count == 1 ? "" : "s"); --pick \(pick) is not one of them")
                throw ExitStatus.usage.code
            }
            return feeds[pick - 1]
        }
        if feeds.count == 1 { return feeds[0] }
        var list = "\(page.redactedString) advertises \(feeds.count) feeds:\n"
        for (number, feed) in feeds.enumerated() {
            let configured = sources.configuredID(for: feed.url).map { " (configured as \($0))" } ?? ""
            list += "  \(number + 1). \(feed.title ?? "untitled") — \(feed.url.redactedString)\(configured)\n"
        }
        guard isatty(STDIN_FILENO) == 1, isatty(STDERR_FILENO) == 1 else {
            Terminal.writeError("aggregate: add: \(list)Pass --pick N to add one of them (or add its URL).")
            throw ExitStatus.usage.code
        }
        Terminal.writeError(list)
        while true {
            FileHandle.standardError.write(Data("Which one? [1-\(feeds.count)] ".utf8))
            guard let line = readLine() else { throw ExitStatus.usage.code }
            if let number = Int(line.trimmingCharacters(in: .whitespaces)), (1...feeds.count).contains(number) {
                return feeds[number - 1]
            }
        }
    }
}

/// The live transport with one timeout, as a source's transport.
private struct TimedTransport: HTTPTransport {
    let live: LiveHTTPTransport
    let timeout: Double

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await live.send(request, timeout: timeout)
    }
}
