import FeedState
import Foundation
import GRDB

/// Pages made from the store's indexes: the page's place is found by rank, price or date
/// (an index each), only the rows up to it are read as ids and keys, and only the page's
/// cards are read whole. A page of a million-card store reads about a page of rows.
extension SQLiteCardStore {
    public func page(_ query: StoredPageQuery) async throws -> StoredPage {
        // A price finer than a millionth, which the index cannot order exactly: every card
        // of the sources ordered here.
        if let page = try await indexedPage(query) { return page }
        return query.page(of: try await cards(of: query.sources))
    }

    /// The page from the indexes; nil when they cannot order it.
    private func indexedPage(_ query: StoredPageQuery) async throws -> StoredPage? {
        guard !query.sources.isEmpty, query.offset >= 0, query.limit > 0 else { return nil }
        let path = directory.cardsPath
        let user = StoreUser.default
        if query.order == .source { return try await sourcePage(query) }
        if let reading = query.reading { return try await markedPage(query, reading: reading) }
        return try await database.read { db -> StoredPage? in
            let inSources = "source IN (\(query.sources.map { _ in "?" }.joined(separator: ", ")))"
            let sources = StatementArguments(query.sources)
            let total = try Int.fetchOne(db.cachedStatement(sql: "SELECT coalesce(sum(cards), 0) FROM card_source_version WHERE \(inSources)"),
                                         arguments: sources) ?? 0
            // A price the index cannot order exactly: the caller sorts the decimals.
            if query.order == .price,
               try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM card INDEXED BY card_inexact_price WHERE user_id = ? AND price_inexact = 1 AND \(inSources) LIMIT 1"),
                                 arguments: [user] + sources) == true {
                return nil
            }
            let (end, overflow) = query.offset.addingReportingOverflow(query.limit)
            let needed = min(overflow ? total : end, total)
            guard query.offset < needed else { return StoredPage(cards: [], total: total) }
            let order = Dictionary(query.sources.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            // Which index walks to the page: one source's own (its cards, by rank), or for
            // several the order's index, read in order and filtered by source; left to
            // itself SQLite seeks every source and sorts all their cards.
            func index(_ name: String) -> String { query.sources.count == 1 ? "card_by_source" : name }
            let rows: [Placed]
            switch query.order {
            // (By source: made above.)
            case .feed, .source:
                rows = try Self.inFeedOrder(db, count: needed, descending: query.descending, index: index("card_by_rank"), where: inSources, sources,
                                            order: order)
            case .title:
                // No index keeps titles (it cost every first recording 5%): one pass over
                // the sources' rows, keeping the page's.
                return try Self.byKeyFromItsEnd(db, query, inSources: "card.\(inSources)", unreadOnly: false, path: path, person: person)
            case .price, .published:
                let (column, keyIndex) = Self.keyColumn(query.order)
                var keyed = try Self.byKey(db, column: column, count: needed, descending: query.descending,
                                           index: index(keyIndex ?? "card_by_rank"), where: inSources, sources, order: order)
                if keyed.count < needed {
                    // Cards without the key come last, in feed order. Every card with one is in
                    // `keyed` by now, so the first `needed` in feed order less those hold them,
                    // read from the rank index alone (filtering on the key read each row from
                    // the table: 20 ms for page 100 of 500 feeds without prices).
                    let withKey = Set(keyed.map(\.rowid))
                    let firsts = try Self.inFeedOrder(db, count: needed, descending: false, index: index("card_by_rank"),
                                                      where: inSources, sources, order: order)
                    keyed += firsts.filter { !withKey.contains($0.rowid) }.prefix(needed - keyed.count)
                }
                rows = keyed
            }
            let rowids = rows[query.offset..<min(needed, rows.count)].map(\.rowid)
            return StoredPage(cards: try Self.cards(db, rowids: rowids, path: path, person: person), total: total)
        }
    }

    /// A page of the cards with `reading`'s marks: the marked rows of the sources read from
    /// the source index with their marks (no card decoded), each numbered in its source's
    /// filtered list, ordered, and only the page's cards read whole. It costs the sources'
    /// rows, not their cards: a reader's Unread view of 25,000 cards reads no JSON but a page's.
    private func markedPage(_ query: StoredPageQuery, reading: ReadingFilter) async throws -> StoredPage? {
        let path = directory.cardsPath
        let person = person
        return try await database.read { db -> StoredPage? in
            let sources = StatementArguments(query.sources)
            let inSources = "card.source IN (\(query.sources.map { _ in "?" }.joined(separator: ", ")))"
            if query.order == .price,
               try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM card WHERE user_id = ? AND price_inexact = 1 AND \(inSources) LIMIT 1"),
                                 arguments: [StoreUser.default] + sources) == true {
                return nil
            }
            if reading == .unread, query.order != .feed,
               let page = try Self.byKeyFromItsEnd(db, query, inSources: inSources, unreadOnly: true, path: path, person: person) {
                return page
            }
            if reading == .unread, query.order == .feed, !query.descending,
               let page = try Self.unreadInFeedOrder(db, query, path: path, person: person) {
                return page
            }
            let marked = switch reading {
            case .unread: "reading.read_at IS NULL"
            case .starred: "reading.starred_at IS NOT NULL"
            case .read: "reading.read_at IS NOT NULL"
            }
            // Starred cards are few: found from the marks' index, not by reading every card.
            let from = reading == .starred
                ? "card_reading reading INDEXED BY card_starred CROSS JOIN card ON card.user_id = \(StoreUser.default) AND card.id = reading.id AND reading.user_id = \(person)"
                : Self.keptFrom(person)
            // The source's place in the query breaks ties after the rank (feed order: the filtered one).
            let place = "CASE card.source " + query.sources.indices.map { "WHEN ? THEN \($0) " }.joined() + "END"
            let direction = query.descending ? "DESC" : "ASC"
            // By price or date, ties keep their place in the unfiltered feed order (rank).
            let order = switch query.order {
            case .feed, .source: "n \(direction), place \(direction)"
            case .price, .published, .title: "key IS NULL, key \(direction), rank, place"
            }
            let key = switch query.order {
            case .feed, .source: "NULL"
            case .price: "card.price_key"
            case .title: "card.title_key"
            case .published: "card.published"
            }
            let rows = try Int64.fetchAll(db.cachedStatement(sql: """
                SELECT rid FROM (
                  SELECT card.rowid AS rid, \(key) AS key, \(place) AS place, card.rank AS rank,
                         row_number() OVER (PARTITION BY card.source ORDER BY card.rank) AS n
                  FROM \(from) WHERE card.user_id = ? AND \(inSources) AND \(marked))
                ORDER BY \(order)
                """), arguments: sources + [StoreUser.default] + sources)
            let start = min(query.offset, rows.count)
            return StoredPage(cards: try Self.cards(db, rowids: Array(rows[start...].prefix(query.limit)), path: path, person: person), total: rows.count)
        }
    }

    /// A page by a key from its end: the Unread view (`unreadOnly`) by date — newest first,
    /// the reader's first page, or oldest first — or by price, read from the key's index
    /// from that end, where the page's unread cards are among the first rows however many
    /// cards are kept; and any view by title, which no index keeps, in one pass over the
    /// sources' rows that keeps the rows up to the page (SQLite's sorter, a page's memory).
    /// Rows of one key and rank (a round of cards recorded together) are read whole and
    /// ordered by their source's place. The total is the sources' unread counts, or their
    /// cards. Nil (the caller numbers every unread card instead) when an index walk's rows
    /// up to the page pass 10,000, or when the page reaches past the priced cards (the
    /// unpriced follow in feed order). Every card has a date (an undated one, when it was
    /// first seen) and a title. (Numbering every unread card took 4.2 s for a page of a
    /// million cards, ordering every card by title 26 s and 4 GB.)
    private static func byKeyFromItsEnd(_ db: Database, _ query: StoredPageQuery, inSources: String, unreadOnly: Bool,
                                        path: String, person: Int) throws -> StoredPage? {
        let (column, index) = Self.keyColumn(query.order)
        // Without an index every statement reads every row: the cap only bounds what is kept.
        let cap = index == nil ? Int.max : 10_000
        let (end, overflow) = query.offset.addingReportingOverflow(query.limit)
        guard !overflow, end <= cap else { return nil }
        let sources = StatementArguments(query.sources)
        let place = Dictionary(query.sources.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var rows: [Placed] = []
        var limit = end + 1
        while true {
            rows = try placed(db, sql: """
                SELECT card.rowid, card.source, card.rank, card.\(column) FROM card \(index.map { "INDEXED BY \($0)" } ?? "")
                \(unreadOnly ? "LEFT JOIN card_reading reading ON reading.user_id = \(person) AND reading.id = card.id" : "")
                WHERE card.user_id = ? AND card.\(column) IS NOT NULL AND \(inSources) \(unreadOnly ? "AND reading.read_at IS NULL" : "")
                ORDER BY card.\(column) \(query.descending ? "DESC" : "ASC"), card.rank LIMIT ?
                """, arguments: [StoreUser.default] + sources + [limit], order: place)
            // Every row read, or the round at the page's end read whole.
            if rows.count < limit || (rows[end - 1].key, rows[end - 1].rank) != (rows[limit - 1].key, rows[limit - 1].rank) { break }
            guard limit < cap else { return nil }
            limit = min(limit * 4, cap)
        }
        if column == "price_key", rows.count < end { return nil }
        rows.sort { a, b in
            guard a.key != b.key else { return (a.rank, a.source) < (b.rank, b.source) }
            guard let x = a.key, let y = b.key else { return a.key != nil }
            return query.descending ? x > y : x < y
        }
        let total = try sourceCounts(db, of: query.sources, reading: unreadOnly ? .unread : nil, path: path, person: person)
            .values.reduce(0, +)
        let page = rows[min(query.offset, rows.count)..<min(end, rows.count)].map(\.rowid)
        return StoredPage(cards: try cards(db, rowids: page, path: path, person: person), total: total)
    }

    /// The Unread view in feed order (``InterleavedPage``): each source's unread count,
    /// then as many of its first unread cards as the page needs, from its own index.
    private static func unreadInFeedOrder(_ db: Database, _ query: StoredPageQuery, path: String, person: Int) throws -> StoredPage? {
        var seen = Set<String>()
        let sources = query.sources.filter { seen.insert($0).inserted }
        let counts = try sourceCounts(db, of: sources, reading: .unread, path: path, person: person)
        let page = InterleavedPage(counts: sources.map { counts[$0] ?? 0 }, offset: query.offset, limit: query.limit)
        let firsts = try db.cachedStatement(sql: """
            SELECT card.rowid FROM card INDEXED BY card_by_source
            LEFT JOIN card_reading reading ON reading.user_id = \(person) AND reading.id = card.id
            WHERE card.user_id = ? AND card.source = ? AND reading.read_at IS NULL ORDER BY card.rank LIMIT ?
            """)
        var lists: [[Int64]] = []
        for (source, wanted) in zip(sources, page.wanted) {
            lists.append(wanted == 0 ? [] : try Int64.fetchAll(firsts, arguments: [StoreUser.default, source, wanted]))
        }
        guard let rowids = page.page(of: lists) else { return nil }
        return StoredPage(cards: try cards(db, rowids: rowids, path: path, person: person), total: page.total)
    }

    /// The column an order's key is kept in, and the index that orders it (none for titles).
    private static func keyColumn(_ order: StoredPageQuery.Order) -> (column: String, index: String?) {
        switch order {
        case .price: ("price_key", "card_by_price")
        case .title: ("title_key", nil)
        case .published, .feed, .source: ("published", "card_by_date")
        }
    }

    /// A sort key as an index holds it: a price or a date, or a title's key, whose UTF-8
    /// bytes (as SQLite compares them) order as the strings do.
    enum PageKey: Comparable {
        case number(Double)
        case text(String)

        init?(_ value: DatabaseValue) {
            switch value.storage {
            case .int64(let number): self = .number(Double(number))
            case .double(let number): self = .number(number)
            case .string(let text): self = .text(text)
            case .null, .blob: return nil
            }
        }
    }

    /// A card's place: its row, source's place in the query, rank, and sort key.
    private struct Placed {
        var rowid: Int64
        var source: Int
        var rank: Int
        var key: PageKey?
    }

    private static func placed(_ db: Database, sql: String, arguments: StatementArguments, order: [String: Int]) throws -> [Placed] {
        // Prepared once per connection (a reader's next page is the same statement), and
        // read through a cursor by column index: a deep page reads thousands of these rows,
        // and copying each into a `Row` looked up by name was most of its time.
        var placed: [Placed] = []
        let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
        while let row = try rows.next() {
            placed.append(Placed(rowid: row[0], source: order[row[1] as String] ?? Int.max, rank: row[2], key: PageKey(row[3])))
        }
        return placed
    }

    /// The first `count` cards in feed order (rank, then the source's place), or its
    /// reverse; the rank index finds where they end.
    private static func inFeedOrder(_ db: Database, count: Int, descending: Bool, index: String, where filter: String, _ sources: StatementArguments,
                                    order: [String: Int]) throws -> [Placed] {
        var rows = try upTo(count, by: "rank", descending: descending, index: index, where: filter, sources, order: order, in: db)
        rows.sort { ($0.rank, $0.source) < ($1.rank, $1.source) }
        if descending { rows.reverse() }
        return Array(rows.prefix(count))
    }

    /// Up to `count` cards that have `column`, by it (feed order breaking ties).
    private static func byKey(_ db: Database, column: String, count: Int, descending: Bool, index: String, where filter: String,
                              _ sources: StatementArguments, order: [String: Int]) throws -> [Placed] {
        var rows = try upTo(count, by: column, descending: descending, index: index, where: "\(column) IS NOT NULL AND \(filter)", sources,
                            order: order, in: db)
        rows.sort { a, b in
            if a.key != b.key, let x = a.key, let y = b.key { return descending ? x > y : x < y }
            return (a.rank, a.source) < (b.rank, b.source)
        }
        return Array(rows.prefix(count))
    }

    /// Every card up to the `count`th by `column` in `index`, the ones tied with it too (a
    /// round of the feed order may hold a card of every source), unordered: the `count`th's
    /// value from the index, then the rows up to it.
    private static func upTo(_ count: Int, by column: String, descending: Bool, index: String, where filter: String,
                             _ sources: StatementArguments, order: [String: Int], in db: Database) throws -> [Placed] {
        let user = StoreUser.default
        let edge = try DatabaseValue.fetchOne(db.cachedStatement(sql: """
            SELECT \(column) FROM card INDEXED BY \(index) WHERE user_id = ? AND \(filter)
            ORDER BY \(column) \(descending ? "DESC" : "ASC") LIMIT 1 OFFSET ?
            """), arguments: [user] + sources + [count - 1])
        var sql = "SELECT rowid, source, rank, \(column) AS key FROM card INDEXED BY \(index) WHERE user_id = ? AND \(filter)"
        var arguments: StatementArguments = [user] + sources
        if let edge, !edge.isNull {
            sql += " AND \(column) \(descending ? ">=" : "<=") ?"
            arguments += [edge]
        }
        return try placed(db, sql: sql, arguments: arguments, order: order)
    }

    public func cards(numbered span: CardNumbers, of sources: [String], limit: Int) async throws -> [KeptCard] {
        guard !sources.isEmpty, limit > 0 else { return [] }
        let (path, person) = (directory.cardsPath, person)
        // Walks the number index from the span's edge, keeping the sources' cards.
        let (filter, value, order): (String, DatabaseValue, String) = switch span {
        case .after(let number): ("card.number > ?", number.databaseValue, "ASC")
        case .before(let number): ("card.number < ?", number.databaseValue, "DESC")
        case .among(let numbers):
            ("card.number IN (SELECT value FROM json_each(?))", try JSONList.text(numbers).databaseValue, "ASC")
        }
        return try await database.read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT \(SQLiteCardStore.keptColumns) FROM \(SQLiteCardStore.keptFrom(person))
                WHERE card.user_id = ? AND \(filter) AND card.source IN (SELECT value FROM json_each(?))
                ORDER BY card.number \(order) LIMIT ?
                """), arguments: [StoreUser.default, value, try JSONList.text(sources), limit])
                .map { try Self.kept($0, path: path) }
        }
    }

    /// The kept cards of `rowids`, in that order.
    static func cards(_ db: Database, rowids: [Int64], path: String, person: Int) throws -> [KeptCard] {
        guard !rowids.isEmpty else { return [] }
        let rows = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT card.rowid, \(SQLiteCardStore.keptColumns) FROM \(SQLiteCardStore.keptFrom(person))
            WHERE card.rowid IN (\(rowids.map { _ in "?" }.joined(separator: ", ")))
            """), arguments: StatementArguments(rowids))
        var byRow: [Int64: KeptCard] = [:]
        for row in rows { byRow[row["rowid"]] = try kept(row, path: path) }
        return rowids.compactMap { byRow[$0] }
    }
}
