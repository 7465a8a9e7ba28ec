import FeedState
import Foundation
import PostgresNIO

/// People's decisions on which cards are one item, in `item_decision`.
extension PostgresCardStore: ItemDecisionStore {
    public func decide(_ pairs: [ItemPair], same: Bool, at: Date) async throws {
        guard !pairs.isEmpty else { return }
        // One row a pair, however often it is named in one call.
        let unique = Array(Set(pairs))
        let ids = Array(Set(pairs.flatMap { [$0.first, $0.second] })).sorted()
        try await migrated().withTransaction { connection in
            _ = try await PostgresStateDatabase.rows("""
                INSERT INTO item_decision (first, second, same, decided_at)
                SELECT first, second, \(same), \(at.timeIntervalSince1970) FROM unnest(\(unique.map(\.first))::text[], \(unique.map(\.second))::text[]) AS t(first, second)
                ON CONFLICT (first, second) DO UPDATE SET same = excluded.same, decided_at = excluded.decided_at
                """, on: connection)
            _ = try await PostgresStateDatabase.rows("""
                UPDATE card_source_version SET version = version + 1 WHERE source IN (
                  SELECT DISTINCT source FROM card WHERE user_id = \(StoreUser.default) AND id = ANY(\(ids)::text[]))
                """, on: connection)
        }
    }

    public func itemDecisions() async throws -> [ItemDecision] {
        try await migrated().query("SELECT first, second, same, decided_at FROM item_decision ORDER BY first, second").map { row in
            let (first, second, same, decidedAt) = try row.decode((String, String, Bool, Double).self)
            return ItemDecision(pair: ItemPair(first, second), same: same, decidedAt: Date(timeIntervalSince1970: decidedAt))
        }
    }
}
