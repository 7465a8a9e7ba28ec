import FeedCore
import FeedState
import Foundation
import GRDB
import SameItem

/// Each card's same-item keys (``ItemKeys``) in `card_item_key`, by key and by the card's
/// row: written with its search row (``updateSearch()``), off the recording's path, and
/// read to find the copies of a page's cards by key.
extension SQLiteCardStore {
    /// The table, and the keys of every card already kept (each read and decoded once).
    static func createItemKeys(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE card_item_key (key INTEGER NOT NULL, row INTEGER NOT NULL, PRIMARY KEY (key, row)) WITHOUT ROWID;
            CREATE INDEX card_item_key_by_row ON card_item_key (row);
            """)
        let rows = try Row.fetchCursor(db, sql: "SELECT rowid, card FROM card")
        while let row = try rows.next() {
            guard let card = StoredCardForm.card(row["card"]) else { continue }
            try insertItemKeys(db, of: card, row: row["rowid"])
        }
    }

    /// Writes the keys of `card`, stored at `row`, in place of the row's earlier ones.
    static func writeItemKeys(_ db: Database, of card: Card, row: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM card_item_key WHERE row = ?").execute(arguments: [row])
        try insertItemKeys(db, of: card, row: row)
    }

    private static func insertItemKeys(_ db: Database, of card: Card, row: Int64) throws {
        let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO card_item_key (key, row) VALUES (?, ?)")
        for key in ItemKeys.of(card) { try insert.execute(arguments: [key, row]) }
    }

    public func cards(sharingItemKeysWith ids: [String]) async throws -> [KeptCard] {
        let wanted = Array(Set(ids))
        guard !wanted.isEmpty else { return [] }
        let (path, person) = (directory.cardsPath, person)
        let list = try JSONList.text(wanted)
        return try await database.read { db in
            let own = Set(try Int64.fetchAll(db.cachedStatement(sql: """
                SELECT rowid FROM card WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))
                """), arguments: [StoreUser.default, list]))
            guard !own.isEmpty else { return [] }
            let keys = try Int64.fetchAll(db.cachedStatement(sql: """
                SELECT DISTINCT key FROM card_item_key WHERE row IN (SELECT value FROM json_each(?))
                """), arguments: [try JSONList.text(own.sorted())])
            // Each key's cards, up to one past the widest: a key that common finds none.
            let holders = try db.cachedStatement(sql: "SELECT row FROM card_item_key WHERE key = ? LIMIT ?")
            var shared: [Int64: (strong: Int, words: Int)] = [:]
            for key in keys {
                let rows = try Int64.fetchAll(holders, arguments: [key, ItemKeys.widest + 1])
                guard rows.count <= ItemKeys.widest else { continue }
                for row in rows {
                    if ItemKeys.isWord(key) { shared[row, default: (0, 0)].words += 1 } else { shared[row, default: (0, 0)].strong += 1 }
                }
            }
            let found = Set(shared.filter { ItemKeys.isCandidate(strong: $0.value.strong, words: $0.value.words) }.keys)
            let cards = try Self.cards(db, rowids: found.subtracting(own).sorted(), path: path, person: person)
            return cards.sorted { $0.card.id < $1.card.id }
        }
    }
}
