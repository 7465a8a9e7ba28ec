import FeedState
import Foundation
import GRDB

/// People's decisions on which cards are one item, in `cards.sqlite`'s `item_decision`.
extension SQLiteCardStore: ItemDecisionStore {
    public func decide(_ pairs: [ItemPair], same: Bool, at: Date) async throws {
        guard !pairs.isEmpty else { return }
        try await database.write { db in
            for pair in pairs {
                try db.cachedStatement(sql: """
                    INSERT INTO item_decision (first, second, same, decided_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (first, second) DO UPDATE SET same = excluded.same, decided_at = excluded.decided_at
                    """).execute(arguments: [pair.first, pair.second, same, at.timeIntervalSince1970])
            }
            let ids = try JSONList.text(Array(Set(pairs.flatMap { [$0.first, $0.second] })).sorted())
            try db.cachedStatement(sql: """
                UPDATE card_source_version SET version = version + 1 WHERE source IN (
                  SELECT DISTINCT source FROM card WHERE user_id = ? AND id IN (SELECT value FROM json_each(?)))
                """).execute(arguments: [StoreUser.default, ids])
        }
    }

    public func itemDecisions() async throws -> [ItemDecision] {
        let path = directory.cardsPath
        return try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT first, second, same, decided_at FROM item_decision ORDER BY first, second").map { row in
                ItemDecision(pair: ItemPair(try Self.column(row, "first", path: path), try Self.column(row, "second", path: path)),
                             same: try Self.column(row, "same", path: path) as Int != 0,
                             decidedAt: Date(timeIntervalSince1970: try Self.column(row, "decided_at", path: path)))
            }
        }
    }
}
