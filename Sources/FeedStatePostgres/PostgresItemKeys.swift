import FeedCore
import FeedState
import Foundation
import PostgresNIO
import SameItem

/// Each card's same-item keys (``ItemKeys``) in `card_item_key`, by key and by card id,
/// and whether it may have copies (`card.has_copies`): written with its search row
/// (``updateSearch()``), off the recording's path, and read to find the copies of a page's
/// marked cards by key (as SQLite's `card_item_key`).
extension PostgresCardStore {
    /// Writes the keys of `cards` in place of those of `replacing` (the ids taken, whose
    /// cards may be gone or no longer read: those keep none), and marks each card that has
    /// a candidate, and the candidate.
    static func writeItemKeys(of cards: [Card], replacing: [String], on connection: PostgresConnection) async throws {
        _ = try await PostgresStateDatabase.rows("DELETE FROM card_item_key WHERE id = ANY(\(replacing)::text[])", on: connection)
        var keys: [Int64] = []
        var ids: [String] = []
        for card in cards {
            for key in ItemKeys.of(card) {
                keys.append(key)
                ids.append(card.id)
            }
        }
        guard !keys.isEmpty else { return }
        _ = try await PostgresStateDatabase.rows("""
            INSERT INTO card_item_key (key, id) SELECT * FROM unnest(\(keys)::bigint[], \(ids)::text[]) ON CONFLICT DO NOTHING
            """, on: connection)
        // The pairs of candidates among the cards' keys' holders, both marked.
        _ = try await PostgresStateDatabase.rows("""
            WITH batch AS (SELECT key, id FROM card_item_key WHERE id = ANY(\(cards.map(\.id))::text[])),
            keys AS (SELECT DISTINCT key FROM batch),
            holders AS (SELECT keys.key, held.id FROM \(unescaped: holdersSQL(of: "keys"))),
            pairs AS (
              SELECT batch.id AS card, holders.id AS other FROM batch JOIN holders ON holders.key = batch.key
              WHERE holders.id <> batch.id GROUP BY batch.id, holders.id HAVING \(unescaped: isCandidateSQL(sharing: "batch.key")))
            UPDATE card SET has_copies = true
            WHERE user_id = \(StoreUser.default) AND NOT has_copies AND id IN (SELECT card FROM pairs UNION SELECT other FROM pairs)
            """, on: connection)
    }

    /// SQL for `keys` (a relation with a `key` column) joined to each key's holders as
    /// `held.id`, up to the widest: a key more cards hold than ``ItemKeys/widest`` finds
    /// none. A `WHERE` clause the caller may go on with `AND`.
    private static func holdersSQL(of keys: String) -> String {
        """
        \(keys) CROSS JOIN LATERAL (SELECT array_agg(id) AS ids FROM (
          SELECT id FROM card_item_key WHERE key = \(keys).key LIMIT \(ItemKeys.widest + 1)) limited) holding
        CROSS JOIN LATERAL unnest(holding.ids) AS held(id)
        WHERE cardinality(holding.ids) <= \(ItemKeys.widest)
        """
    }

    /// SQL for ``ItemKeys/isCandidate(strong:words:)`` over a group's shared keys (`key`,
    /// a column): a strong key is even, a title word's odd.
    private static func isCandidateSQL(sharing key: String) -> String {
        "count(*) FILTER (WHERE \(key) % 2 = 0) > 0 OR count(*) FILTER (WHERE \(key) % 2 <> 0) >= \(ItemKeys.leastSharedWords)"
    }

    /// Migration 16: the keys and marks of every card already kept.
    static func keyEveryItem(on connection: PostgresConnection) async throws {
        try await everyKeptCard(on: connection) { cards in try await writeItemKeys(of: cards, replacing: [], on: connection) }
    }

    public func cards(sharingItemKeysWith ids: [String]) async throws -> [KeptCard] {
        let wanted = Array(Set(ids))
        guard !wanted.isEmpty else { return [] }
        let database = try await migrated()
        // Only a marked card can have a candidate: most pages look nothing up.
        let marked = try await database.query("""
            SELECT id FROM card WHERE user_id = \(StoreUser.default) AND id = ANY(\(wanted)::text[]) AND has_copies
            """).map { try $0.decode(String.self) }
        guard !marked.isEmpty else { return [] }
        // Each key of the marked cards and its holders; per holder, whether the keys it
        // shares make it a candidate.
        let found = try await database.query("""
            WITH mine AS (SELECT DISTINCT key FROM card_item_key WHERE id = ANY(\(marked)::text[]))
            SELECT held.id FROM \(unescaped: Self.holdersSQL(of: "mine")) AND NOT held.id = ANY(\(wanted)::text[])
            GROUP BY held.id HAVING \(unescaped: Self.isCandidateSQL(sharing: "mine.key"))
            """).map { try $0.decode(String.self) }
        return try await cards(ids: found.sorted())
    }
}
