import ArgumentParser
import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import FeedState
import FeedSupport
import Foundation
import SameItem

extension ItemDecisions {
    /// What to merge with when `--merge`, `--no-merge` or the file's `merge:` asks for
    /// merging: the store's decisions (none without a store); nil when not merging.
    static func asked(_ flag: Bool?, config: FeedConfig, store: (any ItemDecisionStore)?) async throws -> ItemDecisions? {
        guard flag ?? config.mergesSameItems else { return nil }
        guard let store else { return ItemDecisions() }
        return ItemDecisions(try await store.itemDecisions())
    }
}

/// The kept cards `texts` name (whole ids or shortened as the text view prints them), each
/// once; a name no kept card has is a usage error naming it.
private func resolvedIDs(_ texts: [String], in store: any CardStore) async throws -> [String] {
    var ids: [String] = []
    for text in texts {
        switch try await StoredCardID.resolve(text, in: store) {
        case .found(let id): if !ids.contains(id) { ids.append(id) }
        case .problem(let message): throw UsageError(message)
        }
    }
    return ids
}

/// `aggregate same ID ID…`: these cards are one item, whatever the rules say.
struct SameCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "same",
        abstract: "Say that cards of the card store are one item (merge: same-item shows them as one).",
        discussion: "Kept in the card store; beats the rules until `aggregate apart` says otherwise. See docs/same-item.md.")

    @Argument(help: ArgumentHelp("Two or more card ids, SOURCE:ID.", valueName: "card-id"))
    var cardIDs: [String] = []

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard cardIDs.count >= 2 else { throw ValidationError("name two or more cards that are one item, e.g. `aggregate same shop-a:DW-45 shop-b:4471`") }
    }

    func run(in context: CommandContext) async throws {
        let ids = try await common.withPersonalStores(context.registry) { stores, _ in
            let ids = try await resolvedIDs(cardIDs, in: stores.cards)
            guard ids.count >= 2 else { throw UsageError("those name one card; name two or more") }
            try await stores.items.decide(ids.dropFirst().map { ItemPair(ids[0], $0) }, same: true, at: Date())
            return ids
        }
        Terminal.writeError("aggregate: \(ids.joined(separator: ", ")) are one item from now on")
    }
}

/// `aggregate apart ID ID`: these two cards are never one item.
struct ApartCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "apart",
        abstract: "Say that two cards of the card store are not one item, whatever the rules find.",
        discussion: "Kept in the card store; beats the rules and holds through every refresh. See docs/same-item.md.")

    @Argument(help: ArgumentHelp("Two card ids, SOURCE:ID.", valueName: "card-id"))
    var cardIDs: [String] = []

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard cardIDs.count == 2 else { throw ValidationError("name the two cards to keep apart, e.g. `aggregate apart hn:123 lobsters:abc`") }
    }

    func run(in context: CommandContext) async throws {
        let ids = try await common.withPersonalStores(context.registry) { stores, _ in
            let ids = try await resolvedIDs(cardIDs, in: stores.cards)
            guard ids.count == 2 else { throw UsageError("those name one card; name two") }
            try await stores.items.decide([ItemPair(ids[0], ids[1])], same: false, at: Date())
            return ids
        }
        Terminal.writeError("aggregate: \(ids[0]) and \(ids[1]) are kept apart from now on")
    }
}

/// `aggregate item ID`: the item a card belongs to, each member and why it was joined.
struct ItemCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "item",
        abstract: "Show the item a kept card belongs to: every copy across sources, and why each was joined.",
        discussion: "Read from the card store's cards of the configured sources, with people's decisions. See docs/same-item.md.")

    @Argument(help: ArgumentHelp("A card id, SOURCE:ID.", valueName: "card-id"))
    var cardID: String

    @OptionGroup var common: CommonOptions

    func run(in context: CommandContext) async throws {
        let lines = try await common.withPersonalStores(context.registry) { stores, config in
            guard let id = try await resolvedIDs([cardID], in: stores.cards).first else { return [String]() }
            let kept = try await stores.cards.cards(of: config.sources.map(\.id))
            let cards = kept.map(\.card)
            let first = Dictionary(kept.map { ($0.card.id, $0.dates.firstSeen.timeIntervalSince1970) }, uniquingKeysWith: min)
            let matcher = ItemMatcher(decisions: ItemDecisions(try await stores.items.itemDecisions()))
            let place = Dictionary(config.sources.enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: min)
            let items = matcher.items(cards) { (first[cards[$0].id] ?? .infinity, place[cards[$0].source] ?? .max) }
            guard let item = items.first(where: { $0.members.contains { cards[$0].id == id } }) else {
                return ["\(TerminalText.safe(id)) is an item of its own: no other source's card is the same"]
            }
            var lines = ["one item of \(item.members.count) cards, shown as \(cards[item.members[0]].id):"]
            for member in item.members {
                let card = cards[member]
                let price = card.price.map { " — \(TerminalText.safe($0.label))" } ?? ""
                let why = item.joins.first { $0.first == card.id || $0.second == card.id }
                let reason = member == item.members[0] ? "first seen" : why.map { "\($0.reason) with \($0.first == card.id ? $0.second : $0.first)" } ?? ""
                lines.append("  \(card.id)  \(TerminalText.safe(card.title))\(price): \(reason)")
            }
            return lines
        }
        for line in lines { context.stdout.write(line + "\n") }
    }
}
