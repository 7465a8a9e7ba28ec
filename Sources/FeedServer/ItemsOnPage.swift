import FeedCore
import FeedEngine
import FeedState
import SameItem
import Synchronization

/// The reader's same-item view: one card per item on a page, and marks that reach every
/// copy. The copies of a page's cards are looked up in the store by their keys
/// (``CardSearchIndex/cards(sharingItemKeysWith:)``, two steps, so that a copy joined
/// through another copy is found too), and ``ItemMatcher`` decides over those few cards
/// alone: a page costs its cards and their candidates, whatever the store's size.
struct ItemsOnPage {
    let index: any CardSearchIndex
    let decisions: ItemDecisions
    /// Each source's place in Sources.yml: of two copies first seen together, the first
    /// source's shows the item.
    let sourceOrder: [String: Int]

    /// `page` with each item once, where its first copy on the page is — the item's
    /// first-seen card when the page has it, so each card shown is one the view selects —
    /// carrying every other copy (on the page or not) in its `also` and `offers`; the page's
    /// other copies are left out.
    func merged(_ page: [KeptCard]) async throws -> [KeptCard] {
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
    func everyCopy(of cards: [KeptCard]) async throws -> [String] {
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
        let near = try await index.cards(sharingItemKeysWith: Array(known))
        known.formUnion(near.map(\.card.id))
        let further = near.isEmpty ? [] : try await index.cards(sharingItemKeysWith: near.map(\.card.id)).filter { !known.contains($0.card.id) }
        let all = cards + near + further
        let items = ItemMatcher(decisions: decisions).items(all.map(\.card)) { index in
            (all[index].dates.firstSeen.timeIntervalSince1970, sourceOrder[all[index].card.source] ?? Int.max)
        }
        return (all, items)
    }
}

/// The store's same-item decisions as the reader's pages read them: read again at most
/// once a second (a decision from the command line or another replica shows within it),
/// and at once after this server records one. A page read them from the store every time:
/// on PostgreSQL a round trip per page for a table that changes when a person says so.
final class RecentItemDecisions: Sendable {
    private struct Reading {
        var kept: (at: ContinuousClock.Instant, decisions: ItemDecisions)?
        /// Moved by ``forget()``: a reading begun before it is not kept.
        var generation = 0
    }

    private let store: (any ItemDecisionStore)?
    private let reading = Mutex(Reading())
    static let freshFor: Duration = .seconds(1)

    init(_ store: (any ItemDecisionStore)?) {
        self.store = store
    }

    /// The decisions, read from the store when the last reading is a second old.
    func current() async throws -> ItemDecisions {
        let now = ContinuousClock.now
        let (kept, generation) = reading.withLock { ($0.kept, $0.generation) }
        if let kept, now - kept.at < Self.freshFor { return kept.decisions }
        let decisions = ItemDecisions(try await store?.itemDecisions() ?? [])
        reading.withLock { if $0.generation == generation { $0.kept = (now, decisions) } }
        return decisions
    }

    /// Forgets the last reading (this server recorded a decision).
    func forget() {
        reading.withLock { $0.kept = nil; $0.generation += 1 }
    }
}
