import FeedCore
import FeedState
import Foundation
import GRDB

/// Search over `card_search`, an FTS5 table beside the cards (its rowid is the card's):
/// the title and the rest of a card as ``SearchText`` tokens, and its kind.
extension SQLiteCardStore {
    static func createSearchTable(_ db: Database) throws {
        // The tokens are made in Swift (SearchText): unicode61 only splits them at spaces.
        try db.execute(sql: """
            CREATE VIRTUAL TABLE card_search USING fts5(title, body, kind UNINDEXED, tokenize = 'unicode61 remove_diacritics 0')
            """)
        let rows = try Row.fetchCursor(db, sql: "SELECT rowid, card FROM card")
        while let row = try rows.next() {
            guard let card = StoredCardForm.card(row["card"]) else { continue }
            try indexForSearch(db, card: card, rowid: row["rowid"])
        }
    }

    /// Writes the search row of `card`, stored at `rowid`.
    static func indexForSearch(_ db: Database, card: Card, rowid: Int64) throws {
        let document = CardSearch.document(of: card)
        try db.cachedStatement(sql: "INSERT INTO card_search (rowid, title, body, kind) VALUES (?, ?, ?, ?)")
            .execute(arguments: [rowid, document.title.joined(separator: " "), document.body.joined(separator: " "), card.kind.rawValue])
    }

    /// Writes the search rows of `cards` just written (`replacing`: they had rows before).
    static func indexForSearch(_ db: Database, cards: [Card], replacing: [Bool], user: Int) throws {
        let rowid = try db.cachedStatement(sql: "SELECT rowid FROM card WHERE user_id = ? AND id = ?")
        let remove = try db.cachedStatement(sql: "DELETE FROM card_search WHERE rowid = ?")
        for (card, replaced) in zip(cards, replacing) {
            guard let row = try Int64.fetchOne(rowid, arguments: [user, card.id]) else { continue }
            if replaced { try remove.execute(arguments: [row]) }
            try indexForSearch(db, card: card, rowid: row)
        }
    }

    /// An FTS5 query: every term (a quoted phrase each; the tokens hold no quote) together.
    static func matchAll(_ terms: [[String]]) -> String {
        terms.map { "\"" + $0.joined(separator: " ") + "\"" }.joined(separator: " ")
    }

    public func search(_ search: CardSearch, offset: Int, limit: Int) async throws -> StoredPage {
        let path = directory.cardsPath
        return try await database.read { db in
            var conditions = ["card.user_id = ?"]
            var arguments: StatementArguments = [StoreUser.default]
            if !search.required.isEmpty {
                conditions.append("card.rowid IN (SELECT rowid FROM card_search WHERE card_search MATCH ?)")
                arguments += [Self.matchAll(search.required)]
            }
            if !search.excluded.isEmpty {
                conditions.append("card.rowid NOT IN (SELECT rowid FROM card_search WHERE card_search MATCH ?)")
                arguments += [search.excluded.map { Self.matchAll([$0]) }.joined(separator: " OR ")]
            }
            if !search.sources.isEmpty {
                conditions.append("card.source IN (\(search.sources.map { _ in "?" }.joined(separator: ", ")))")
                arguments += StatementArguments(search.sources)
            }
            if !search.kinds.isEmpty {
                conditions.append("found.kind IN (\(search.kinds.map { _ in "?" }.joined(separator: ", ")))")
                arguments += StatementArguments(search.kinds.map(\.rawValue))
            }
            for bound in search.prices {
                guard let micros = PriceMicros.micros(bound.amount) else { return StoredPage(cards: [], total: 0) }
                conditions.append("card.price_key \(bound.comparison.rawValue) ?")
                arguments += [micros]
            }
            // Ranked first: the cards whose title holds every term (all do when none is asked for).
            var inTitle = ""
            if !search.required.isEmpty {
                inTitle = "card.rowid IN (SELECT rowid FROM card_search WHERE card_search MATCH ?) DESC, "
                arguments += ["title : (\(Self.matchAll(search.required)))"]
            }
            let rowids = try Int64.fetchAll(db, sql: """
                SELECT card.rowid FROM card JOIN card_search found ON found.rowid = card.rowid
                WHERE \(conditions.joined(separator: " AND "))
                ORDER BY \(inTitle)coalesce(card.published, card.first_seen) DESC, card.id
                """, arguments: arguments)
            let start = min(max(offset, 0), rowids.count)
            return StoredPage(cards: try Self.cards(db, rowids: Array(rowids[start...].prefix(max(limit, 0))), path: path), total: rowids.count)
        }
    }
}
