import FeedCore
import FeedState
import Foundation
import GRDB

/// Search over `card_search`, an FTS5 table beside the cards: the title and the rest of a
/// card as ``SearchText`` tokens, its kind, and the card's row.
///
/// The table's row ids are the search order: a card's second (``CardSearch/second(of:)``)
/// times 2²² plus a number among the cards of that second (the card's `search_key`). FTS5
/// hands matches in row-id order, so the newest 20 of 80,000 matches are the first 20 it
/// reads, not 80,000 cards looked up and sorted (0.9 s on a million-card store); only the
/// cards of the page's last second are read whole, to put equal seconds in id order.
///
/// A recording does not write search rows: it lists the cards it wrote in `card_unsearched`,
/// and ``updateSearch()`` writes their rows later — first thing in every search, and in
/// `serve` in the background, within a second of any recording. FTS5 costs 30–40 µs a card, and a cold refresh of 500 feeds
/// (25,000 new cards) spent 0.9 s of its 1.8 s of recording on it, on the store's one
/// writer; lemon24's `reader` and NetNewsWire index apart from fetching the same way.
extension SQLiteCardStore: CardSearchIndex {
    public func searching(as person: Int) -> any CardSearchIndex {
        SQLiteCardStore(directory, person: person)
    }

    /// The row ids of one second: `second << keyShift` up to the next second's.
    static let keyShift: Int64 = 22

    /// The search table as it first was (the migration "v5: search"); "v7" replaces it.
    static func createFirstSearchTable(_ db: Database) throws {
        try db.execute(sql: "CREATE VIRTUAL TABLE card_search USING fts5(title, body, kind UNINDEXED, tokenize = 'unicode61 remove_diacritics 0')")
    }

    /// The search table ordered by date (see the type), indexing every card kept.
    static func createSearchTable(_ db: Database) throws {
        // The tokens are made in Swift (SearchText): unicode61 only splits them at spaces.
        try db.execute(sql: """
            DROP TABLE IF EXISTS card_search;
            CREATE VIRTUAL TABLE card_search USING fts5(title, body, kind UNINDEXED, card UNINDEXED, tokenize = 'unicode61 remove_diacritics 0');
            ALTER TABLE card ADD COLUMN search_key INTEGER;
            """)
        // In the order of their search rows, each card's second and then its row (see
        // ``searchKey(published:row:firstSeen:offset:)``): in row order, a store recorded newest first would
        // be a segment of the index a card.
        var rows: [(row: Int64, firstSeen: Double)] = []
        let ordered = try Row.fetchCursor(db, sql: "SELECT rowid, first_seen FROM card ORDER BY CAST(coalesce(published, first_seen) AS INTEGER), rowid")
        while let row = try ordered.next() { rows.append((row[0], row[1])) }
        let read = try db.makeStatement(sql: "SELECT card FROM card WHERE rowid = ?")
        for (row, firstSeen) in rows {
            guard let json = try Data.fetchOne(read, arguments: [row]), let card = StoredCardForm.card(json) else { continue }
            try indexForSearch(db, card: card, row: row, firstSeen: firstSeen, oldKey: nil)
        }
    }

    /// The cards recorded since ``updateSearch()`` last wrote their search rows, by row.
    static func createUnsearched(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE card_unsearched (row INTEGER PRIMARY KEY)")
    }

    /// Notes that the cards at `rows` were written: their search rows are to be written
    /// (again). A card written twice before that is written once, as it is then.
    static func awaitSearch(_ db: Database, rows: [Int64]) throws {
        guard !rows.isEmpty else { return }
        let list = try JSONList.text(rows)
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO card_unsearched (row) SELECT value FROM json_each(?)").execute(arguments: [list])
    }

    /// Cards whose search rows one transaction of ``updateSearch()`` writes. FTS5 writes each
    /// transaction's rows as a segment and merges segments level by level, so small
    /// transactions cost merges: 200,000 cards took 19 s in transactions of 5,000 and 13 s
    /// in ones of 100,000. A transaction holds a few numbers a card (each card is read and
    /// decoded at its turn); a recording waits for one, about 2 s.
    static let searchBatch = 50_000

    public func updateSearch() async throws -> Int {
        let database = try database
        var written = 0
        // A look first: a search with nothing to write (the usual case) does not wait for
        // the store's writer.
        while try await database.read({ db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM card_unsearched)") ?? false }) {
            try Task.checkCancellation()
            written += try await database.write { db in try Self.writeUnsearched(db, limit: Self.searchBatch) }
        }
        return written
    }

    /// Writes the search rows of up to `limit` cards of `card_unsearched`, by ascending search
    /// row id (see ``searchKey(published:row:firstSeen:offset:)``), and takes them off it; how
    /// many it wrote. A card whose stored form no longer reads has no search row (found by
    /// none); a row whose card is gone is only taken off (a purge leaves such rows to this
    /// pass, which empties whatever it read).
    static func writeUnsearched(_ db: Database, limit: Int) throws -> Int {
        // The order comes from the columns, without a card decoded; then each card is read
        // and decoded at its turn, so the transaction holds a few numbers a card.
        var taken: [Int64] = []
        var pending: [(key: Int64, row: Int64, firstSeen: Double, oldKey: Int64?)] = []
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT pending.row, card.first_seen, card.published, card.search_key FROM card_unsearched pending
            LEFT JOIN card ON card.rowid = pending.row ORDER BY pending.row LIMIT ?
            """), arguments: [limit])
        while let row = try rows.next() {
            let (at, firstSeen): (Int64, Double?) = (row[0], row[1])
            taken.append(at)
            guard let firstSeen else { continue }
            let published = (row[2] as Double?).map(Date.init(timeIntervalSince1970:))
            pending.append((searchKey(published: published, row: at, firstSeen: firstSeen), at, firstSeen, row[3]))
        }
        let read = try db.cachedStatement(sql: "SELECT card FROM card WHERE rowid = ?")
        var keyed: [Int64] = []
        for card in pending.sorted(by: { $0.key < $1.key }) {
            guard let json = try Data.fetchOne(read, arguments: [card.row]), let decoded = StoredCardForm.card(json) else { continue }
            try indexForSearch(db, card: decoded, row: card.row, firstSeen: card.firstSeen, oldKey: card.oldKey)
            try writeItemKeys(db, of: decoded, row: card.row)
            keyed.append(card.row)
        }
        try markCopies(db, of: keyed)
        // A row taken whose card is gone (or no longer reads) keeps no keys.
        let unread = Set(taken).subtracting(keyed)
        if !unread.isEmpty {
            try db.cachedStatement(sql: "DELETE FROM card_item_key WHERE row IN (SELECT value FROM json_each(?))")
                .execute(arguments: [try JSONList.text(unread.sorted())])
        }
        let done = try JSONList.text(taken)
        try db.cachedStatement(sql: "DELETE FROM card_unsearched WHERE row IN (SELECT value FROM json_each(?))").execute(arguments: [done])
        return keyed.count
    }

    /// Writes the search row of `card`, stored at `row`, in place of the one at `oldKey`.
    static func indexForSearch(_ db: Database, card: Card, row: Int64, firstSeen: Double, oldKey: Int64?) throws {
        if let oldKey { try db.cachedStatement(sql: "DELETE FROM card_search WHERE rowid = ?").execute(arguments: [oldKey]) }
        let document = CardSearch.document(of: card)
        let slots: Int64 = 1 << keyShift
        let insert = try db.cachedStatement(sql: "INSERT INTO card_search (rowid, title, body, kind, card) VALUES (?, ?, ?, ?, ?)")
        let (title, body) = (document.title.joined(separator: " "), document.body.joined(separator: " "))
        var offset: Int64 = 0
        var key: Int64
        while true {
            key = searchKey(published: card.published, row: row, firstSeen: firstSeen, offset: offset)
            do {
                try insert.execute(arguments: [key, title, body, card.kind.rawValue, row])
                break
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT && offset + 1 < slots {
                offset += 1
            }
        }
        try db.cachedStatement(sql: "UPDATE card SET search_key = ? WHERE rowid = ?").execute(arguments: [key, row])
    }

    /// The search row id of the card at `row`, dated `published` (else `firstSeen`): its
    /// second, and the card's own row number for its place in the second, or (`offset`) a
    /// later place when that one is taken. Rows are written by ascending id: FTS5 writes the
    /// terms it holds out as a new segment whenever a row id is lower than the one before,
    /// and cards come in feed order, newest first (every card was a segment of its own).
    static func searchKey(published: Date?, row: Int64, firstSeen: Double, offset: Int64 = 0) -> Int64 {
        let second = CardSearch.second(of: published ?? Date(timeIntervalSince1970: firstSeen))
        let slots: Int64 = 1 << keyShift
        return second << keyShift | (row + offset) & (slots - 1)
    }

    /// An FTS5 query: every term (a quoted phrase each; the tokens hold no quote) together.
    static func matchAll(_ terms: [[String]]) -> String {
        terms.map { "\"" + $0.joined(separator: " ") + "\"" }.joined(separator: " ")
    }

    /// An FTS5 query: any of the terms.
    static func matchAny(_ terms: [[String]]) -> String {
        terms.map { matchAll([$0]) }.joined(separator: " OR ")
    }

    public func search(_ search: CardSearch, offset: Int, limit: Int) async throws -> StoredPage {
        _ = try await updateSearch()
        let path = directory.cardsPath
        return try await database.read { db in
            var filters: [String] = []
            var arguments: StatementArguments = []
            if !search.sources.isEmpty {
                filters.append("card.source IN (\(search.sources.map { _ in "?" }.joined(separator: ", ")))")
                arguments += StatementArguments(search.sources)
            }
            if !search.kinds.isEmpty {
                filters.append("found.kind IN (\(search.kinds.map { _ in "?" }.joined(separator: ", ")))")
                arguments += StatementArguments(search.kinds.map(\.rawValue))
            }
            for bound in search.prices {
                guard let micros = PriceMicros.micros(bound.amount) else { return StoredPage(cards: [], total: 0) }
                filters.append("card.price_key \(bound.comparison.rawValue) ?")
                arguments += [micros]
            }
            let skip = max(offset, 0)
            let take = max(limit, 0)
            guard !search.required.isEmpty else {
                let rows = try Self.everyCard(db, search, filters: filters, arguments: arguments)
                let start = min(skip, rows.count)
                return StoredPage(cards: try Self.cards(db, rowids: Array(rows[start...].prefix(take)), path: path, person: person), total: rows.count)
            }
            // Ranked in two tiers, each an FTS5 query read newest first: the cards whose
            // title holds every term, then the others. Only the first tier's rows up to the
            // page's end are read: if it holds fewer, they say how many it has.
            let excluded = search.excluded.isEmpty ? "" : " NOT (\(Self.matchAny(search.excluded)))"
            let inTitle = "(title : (\(Self.matchAll(search.required))))"
            let found = MatchQuery(match: "(\(Self.matchAll(search.required)))" + excluded, filters: filters, arguments: arguments)
            let titled = MatchQuery(match: inTitle + excluded, filters: filters, arguments: arguments)
            let others = MatchQuery(match: "(\(Self.matchAll(search.required))) NOT \(inTitle)" + excluded, filters: filters, arguments: arguments)
            // Counted up to 10,000 or the page's end: counting 80,000 matches of two common
            // words was most of such a search's time, and nobody pages that far.
            let wantedEnd = skip.addingReportingOverflow(take).overflow ? Int.max : skip + take
            let countLimit = max(Self.countedMatches, min(wantedEnd, Int.max - 1))
            let counted = try found.count(db, upTo: countLimit + 1)
            let total = min(counted, countLimit)
            let end = min(total, wantedEnd)
            guard skip < end else { return StoredPage(cards: [], total: total, totalIsAtLeast: counted > countLimit) }
            let first = try titled.newest(db, end)
            var rowids = Array(first[min(skip, first.count)..<min(end, first.count)])
            if first.count < end {
                // The first tier holds `first.count` cards: the rest of the page is the others'.
                let rest = try others.newest(db, end - first.count)
                rowids += rest[min(max(0, skip - first.count), rest.count)...]
            }
            return StoredPage(cards: try Self.cards(db, rowids: rowids, path: path, person: person), total: total, totalIsAtLeast: counted > countLimit)
        }
    }

    /// How many matches a search counts at least (see ``StoredPage/totalIsAtLeast``).
    static let countedMatches = 10_000

    /// A search with no word to match: every card the filters keep, in search order.
    private static func everyCard(_ db: Database, _ search: CardSearch, filters: [String], arguments: StatementArguments) throws -> [Int64] {
        var conditions = ["card.user_id = ?"] + filters
        var arguments: StatementArguments = [StoreUser.default] + arguments
        if !search.excluded.isEmpty {
            conditions.append("found.rowid NOT IN (SELECT rowid FROM card_search WHERE card_search MATCH ?)")
            arguments += [Self.matchAny(search.excluded)]
        }
        return try Int64.fetchAll(db, sql: """
            SELECT card.rowid FROM card JOIN card_search found ON found.rowid = card.search_key
            WHERE \(conditions.joined(separator: " AND "))
            ORDER BY found.rowid >> \(keyShift) DESC, card.id
            """, arguments: arguments)
    }

    /// One tier of a search: an FTS5 expression and the filters that need the card's row.
    /// Every card kept is the default user's (people have their own marks, not cards).
    private struct MatchQuery {
        var match: String
        var filters: [String]
        var arguments: StatementArguments

        /// The cards found by `match` that the filters keep, with row ids in `keys` if given.
        /// Read in row-id order (newest first), SQLite leaves the order to FTS5.
        private func select(_ columns: String, keys: ClosedRange<Int64>? = nil) -> (sql: String, arguments: StatementArguments) {
            let join = filters.isEmpty ? "" : " CROSS JOIN card ON card.rowid = found.card"
            let conditions = ["found.card_search MATCH ?"] + (keys == nil ? [] : ["found.rowid BETWEEN ? AND ?"]) + filters
            let values: StatementArguments = [match] + (keys.map { [$0.lowerBound, $0.upperBound] } ?? []) + arguments
            return ("SELECT \(columns) FROM card_search found\(join) WHERE \(conditions.joined(separator: " AND "))", values)
        }

        /// How many cards the tier holds, counted up to `limit`.
        func count(_ db: Database, upTo limit: Int) throws -> Int {
            let query = select("1")
            return try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM (\(query.sql) LIMIT ?)"), arguments: query.arguments + [limit]) ?? 0
        }

        /// The card rows of the tier's first `count`, newest first and by id within a
        /// second; fewer when it holds fewer.
        func newest(_ db: Database, _ count: Int) throws -> [Int64] {
            let query = select("found.rowid, found.card")
            var found = try Row.fetchAll(db.cachedStatement(sql: query.sql + " ORDER BY found.rowid DESC LIMIT ?"),
                                         arguments: query.arguments + [count]).map { (key: $0[0] as Int64, card: $0[1] as Int64) }
            // The last second may go on past the limit, and its cards sort by id: read it whole.
            if found.count == count, let last = found.last?.key, last > (last >> keyShift) << keyShift {
                let rest = select("found.rowid, found.card", keys: (last >> keyShift) << keyShift...(last - 1))
                found += try Row.fetchAll(db.cachedStatement(sql: rest.sql + " ORDER BY found.rowid DESC"), arguments: rest.arguments)
                    .map { (key: $0[0], card: $0[1]) }
            }
            // Cards of one second go by id: read the ids of every second that has several.
            let perSecond = Dictionary(grouping: found, by: { $0.key >> keyShift })
            var ids: [Int64: String] = [:]
            let statement = try db.cachedStatement(sql: "SELECT id FROM card WHERE rowid = ?")
            for row in perSecond.values where row.count > 1 {
                for card in row { ids[card.card] = try String.fetchOne(statement, arguments: [card.card]) ?? "" }
            }
            let ordered = found.sorted { a, b in
                let (secondA, secondB) = (a.key >> keyShift, b.key >> keyShift)
                if secondA != secondB { return secondA > secondB }
                return (ids[a.card] ?? "", a.key) < (ids[b.card] ?? "", b.key)
            }
            return ordered.prefix(count).map(\.card)
        }
    }
}
