import ArgumentParser
import FeedEngine
import FeedFormats
import FeedState
import FeedSupport
import Foundation

extension ReadingMark: ExpressibleByArgument {}

/// `aggregate mark read|unread|star|unstar ID…`, `aggregate mark read --all`: the
/// reader's controls on the command line.
struct MarkCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "mark",
        abstract: "Mark cards of the card store read, unread, starred or not starred.",
        discussion: """
            Ids as `show` takes them, shortened ones too (ltk:c70ee07…0004, or ... for …). \
            `mark read --all` marks read every card first seen up to --before (default: now), of \
            --source when given: cards a refresh adds after that stay unread. See docs/reading.md.
            """)

    @Argument(help: ArgumentHelp("read, unread, star or unstar.", valueName: "mark"))
    var mark: ReadingMark

    @Argument(help: ArgumentHelp("Card ids, SOURCE:ID (e.g. cabify:MUG).", valueName: "card-id"))
    var cardIDs: [String] = []

    @Flag(help: "With read: every unread card first seen up to --before.")
    var all = false

    @Option(help: ArgumentHelp("With --all: an RFC 3339 time (2026-11-27T08:00:00Z) or now (the default).", valueName: "time"))
    var before: String?

    @Option(name: .customLong("source"), help: ArgumentHelp("With --all: only this source id (repeatable).", valueName: "id"))
    var sources: [String] = []

    @OptionGroup var common: CommonOptions

    func validate() throws {
        if all {
            guard mark == .read else { throw ValidationError("--all marks cards read: write `aggregate mark read --all`") }
            guard cardIDs.isEmpty else { throw ValidationError("--all marks every card: leave out the card ids") }
            _ = try seenBy(now: Date())
        } else {
            guard !cardIDs.isEmpty else {
                throw ValidationError("name the cards to mark \(mark.rawValue) (e.g. `aggregate mark \(mark.rawValue) cabify:MUG`), or mark every card read with `aggregate mark read --all`")
            }
            if before != nil || !sources.isEmpty { throw ValidationError("--before and --source go with --all") }
        }
    }

    /// The time `--before` names.
    func seenBy(now: Date) throws -> Date {
        guard let before, before.lowercased() != "now" else { return now }
        guard let date = RFC3339.date(from: before) else {
            throw ValidationError("--before must be an RFC 3339 time such as 2026-11-27T08:00:00Z, or now; got \"\(before)\"")
        }
        return date
    }

    func run(in context: CommandContext) async throws {
        let now = Date()
        if all {
            let count = try await common.withPersonalStores(context.registry) { stores, config in
                let chosen = sources.isEmpty ? nil : try FeedRunner.select(sources, in: config).map(\.id)
                return try await stores.marks.markRead(seenBy: try seenBy(now: now), sources: chosen, at: now)
            }
            Terminal.writeError("aggregate: marked \(count) card\(count == 1 ? "" : "s") read")
            return
        }
        let (marked, problems) = try await common.withPersonalStores(context.registry) { stores, _ in
            var ids: [String] = []
            var problems: [String] = []
            for text in cardIDs {
                switch try await StoredCardID.resolve(text, in: stores.cards) {
                case .found(let id): ids.append(id)
                case .problem(let message): problems.append(message)
                }
            }
            return (try await stores.marks.mark(ids, mark, at: now), problems)
        }
        for problem in problems { Terminal.writeError("aggregate: \(problem)") }
        if !marked.isEmpty {
            Terminal.writeError("aggregate: marked \(marked.count) card\(marked.count == 1 ? "" : "s") \(Self.words(mark))")
        }
        if !problems.isEmpty { throw ExitStatus.failed.code }
    }

    static func words(_ mark: ReadingMark) -> String {
        switch mark {
        case .read: "read"
        case .unread: "unread"
        case .star: "starred"
        case .unstar: "not starred"
        }
    }
}

/// A card id as a person types it, found in the card store: whole, or shortened as the
/// text view prints it.
enum StoredCardID {
    enum Resolution {
        case found(String)
        case problem(String)
    }

    static func resolve(_ text: String, in store: any CardStore) async throws -> Resolution {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex, text.index(after: colon) != text.endIndex else {
            throw UsageError("\"\(TerminalText.safe(text))\" is not a card id; write SOURCE:ID, e.g. cabify:MUG")
        }
        if try await store.card(id: text) != nil { return .found(text) }
        let source = String(text[..<colon])
        let missing = Resolution.problem("no card \(TerminalText.safe(text)) in the card store; `aggregate --stored --all --format text` lists the cards it keeps")
        guard let shortened = ShortenedID(String(text[text.index(after: colon)...])) else { return missing }
        let prefix = source + ":"
        let matches = try await store.ids(of: source).filter { id in
            id.hasPrefix(prefix) && shortened.matches(upstreamID: String(id.dropFirst(prefix.count)))
        }.sorted()
        switch matches.count {
        case 0: return missing
        case 1: return .found(matches[0])
        default:
            let some = matches.prefix(3).map { TerminalText.safe($0) }.joined(separator: ", ")
            return .problem("\(TerminalText.safe(text)) matches \(matches.count) cards (\(some)\(matches.count > 3 ? ", …" : "")); give more of the id")
        }
    }
}
