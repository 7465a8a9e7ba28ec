import FeedCore
import FeedState
import Foundation
import GRDB
import SameItem

/// Each card's same-item keys (``ItemKeys``) in `card_item_key`, by key and by the card's
/// row, and whether it may have copies (`card.has_copies`): written with its search row
/// (``updateSearch()``), off the recording's path. A card is marked when, as it is keyed,
/// it and another card are candidates of each other (both are marked), so that a reader's
/// page looks keys up only for its marked cards: in most stores few have copies, and a
/// page of a million-card store paid its keys' lookups on every page.
extension SQLiteCardStore {
    /// The table and the column, and the keys and marks of every card already kept (each
    /// read and decoded once).
    static func createItemKeys(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE card_item_key (key INTEGER NOT NULL, row INTEGER NOT NULL, PRIMARY KEY (key, row)) WITHOUT ROWID;
            CREATE INDEX card_item_key_by_row ON card_item_key (row);
            ALTER TABLE card ADD COLUMN has_copies INTEGER NOT NULL DEFAULT 0;
            """)
        var keyed: [Int64] = []
        let rows = try Row.fetchCursor(db, sql: "SELECT rowid, card FROM card")
        while let row = try rows.next() {
            guard let card = StoredCardForm.card(row["card"]) else { continue }
            try insertItemKeys(db, of: card, row: row["rowid"])
            keyed.append(row["rowid"])
        }
        for start in stride(from: 0, to: keyed.count, by: searchBatch) {
            try markCopies(db, of: Array(keyed[start..<min(start + searchBatch, keyed.count)]))
        }
    }

    /// Writes the keys of `card`, stored at `row`, in place of the row's earlier ones
    /// (``markCopies(_:of:)`` then marks the cards written).
    static func writeItemKeys(_ db: Database, of card: Card, row: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM card_item_key WHERE row = ?").execute(arguments: [row])
        try insertItemKeys(db, of: card, row: row)
    }

    private static func insertItemKeys(_ db: Database, of card: Card, row: Int64) throws {
        let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO card_item_key (key, row) VALUES (?, ?)")
        for key in ItemKeys.of(card) { try insert.execute(arguments: [key, row]) }
    }

    /// Marks each card at `rows` that has a candidate, and the candidate, as having copies.
    /// Each key is looked up once for all of them (a batch's cards share title words).
    static func markCopies(_ db: Database, of rows: [Int64]) throws {
        guard !rows.isEmpty else { return }
        var keysOf: [Int64: [Int64]] = [:]
        let pairs = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT row, key FROM card_item_key WHERE row IN (SELECT value FROM json_each(?))
            """), arguments: [try JSONList.text(rows)])
        while let pair = try pairs.next() { keysOf[pair[0], default: []].append(pair[1]) }
        let holders = try self.holders(db, of: Set(keysOf.values.joined()))
        var marked = Set<Int64>()
        for (row, keys) in keysOf {
            let others = ItemKeys.candidates(sharing: keys, holders: holders).subtracting([row])
            if !others.isEmpty { marked.insert(row); marked.formUnion(others) }
        }
        guard !marked.isEmpty else { return }
        try db.cachedStatement(sql: "UPDATE card SET has_copies = 1 WHERE rowid IN (SELECT value FROM json_each(?)) AND has_copies = 0")
            .execute(arguments: [try JSONList.text(marked.sorted())])
    }

    /// The rows holding each of `keys`, a key more than ``ItemKeys/widest`` cards hold left out.
    private static func holders(_ db: Database, of keys: Set<Int64>) throws -> [Int64: [Int64]] {
        let statement = try db.cachedStatement(sql: "SELECT row FROM card_item_key WHERE key = ? LIMIT ?")
        var holders: [Int64: [Int64]] = [:]
        for key in keys {
            let holding = try Int64.fetchAll(statement, arguments: [key, ItemKeys.widest + 1])
            if holding.count <= ItemKeys.widest { holders[key] = holding }
        }
        return holders
    }

    public func cards(sharingItemKeysWith ids: [String]) async throws -> [KeptCard] {
        let wanted = Array(Set(ids))
        guard !wanted.isEmpty else { return [] }
        let (path, person) = (directory.cardsPath, person)
        let list = try JSONList.text(wanted)
        return try await database.read { db in
            var own = Set<Int64>()
            var marked: [Int64] = []
            for row in try Row.fetchAll(db.cachedStatement(sql: """
                SELECT rowid, has_copies FROM card WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))
                """), arguments: [StoreUser.default, list]) {
                own.insert(row[0])
                if row[1] as Bool { marked.append(row[0]) }
            }
            // Only a marked card can have a candidate: most pages look nothing up.
            guard !marked.isEmpty else { return [] }
            let keys = Set(try Int64.fetchAll(db.cachedStatement(sql: """
                SELECT key FROM card_item_key WHERE row IN (SELECT value FROM json_each(?))
                """), arguments: [try JSONList.text(marked)]))
            let found = ItemKeys.candidates(sharing: keys, holders: try Self.holders(db, of: keys)).subtracting(own)
            return try Self.cards(db, rowids: found.sorted(), path: path, person: person).sorted { $0.card.id < $1.card.id }
        }
    }
}
