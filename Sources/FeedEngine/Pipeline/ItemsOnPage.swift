import FeedCore
import FeedState
import SameItem

/// The same-item view of a page the card store made (the reader's, `--stored --merge`):
/// one card per item on a page, and marks that reach every copy. The copies of a page's
/// cards are looked up in the store by their keys
/// (``CardSearchIndex/cards(sharingItemKeysWith:)``, two steps, so that a copy joined
/// through another copy is found too), and ``ItemMatcher`` decides over those few cards
/// alone: a page costs its cards and their candidates, whatever the store's size.
public struct ItemsOnPage {
    public let index: any CardSearchIndex
    /// The kept cards, read by id: those a person joined to a page's cards (`aggregate
    /// same`), which may share no key with them.
    public let store: any CardStore
    public let decisions: ItemDecisions
    /// Each source's place in Sources.yml: of two copies first seen together, the first
    /// source's shows the item.
    public let sourceOrder: [String: Int]

    public init(index: any CardSearchIndex, store: any CardStore, decisions: ItemDecisions, sourceOrder: [String: Int]) {
        self.index = index
        self.store = store
        self.decisions = decisions
        self.sourceOrder = sourceOrder
    }

    /// `page` with each item once, where its first copy on the page is — the item's
    /// first-seen card when the page has it, so each card shown is one the view selects —
    /// carrying every other copy (on the page or not) in its `also` and `offers`; the page's
    /// other copies are left out.
    public func merged(_ page: [KeptCard]) async throws -> [KeptCard] {
        let (all, items) = try await self.items(around: page)
        let cards = all.map(\.card)
        var shown = page
        var copies = Set<Int>()
        for item in items {
            let onPage = item.members.filter { $0 < page.count }
            guard let first = onPage.first else { continue }
            var shownFirst = item
            shownFirst.members = [first] + item.members.filter { $0 != first }
            shown[first].card = ItemMerge.card(shownFirst, of: cards)
            copies.formUnion(onPage.dropFirst())
        }
        return shown.indices.filter { !copies.contains($0) }.map { shown[$0] }
    }

    /// `cards`' ids and those of every other copy of their items: what a mark reaches.
    public func everyCopy(of cards: [KeptCard]) async throws -> [String] {
        let (all, items) = try await self.items(around: cards)
        var ids = cards.map(\.card.id)
        for item in items where item.members.contains(where: { $0 < cards.count }) {
            ids += item.members.filter { $0 >= cards.count }.map { all[$0].card.id }
        }
        return ids
    }

    /// `cards` followed by their candidates, and the items among them (members by index,
    /// first seen first).
    private func items(around cards: [KeptCard]) async throws -> (all: [KeptCard], items: [ItemMatcher.Item]) {
        var known = Set(cards.map(\.card.id))
        var near = try await index.cards(sharingItemKeysWith: Array(known))
        known.formUnion(near.map(\.card.id))
        let joined = Set(decisions.same.filter { $0.contains(where: known.contains) }.joined()).subtracting(known)
        if !joined.isEmpty {
            near += try await store.cards(ids: joined.sorted())
            known.formUnion(near.map(\.card.id))
        }
        let further = near.isEmpty ? [] : try await index.cards(sharingItemKeysWith: near.map(\.card.id)).filter { !known.contains($0.card.id) }
        let all = cards + near + further
        let items = ItemMatcher(decisions: decisions).items(all.map(\.card)) { index in
            (all[index].dates.firstSeen.timeIntervalSince1970, sourceOrder[all[index].card.source] ?? Int.max)
        }
        return (all, items)
    }
}
