import FeedState
import Foundation
import PostgresNIO

/// Pages made from the store's indexes, as ``SQLiteCardStore`` makes them: the page's
/// rows are found by rank, price or date (an index each, `card_by_rank`, `card_by_price`,
/// `card_by_date`, or `card_by_source` for one source), only their ids are read up to the
/// page, and only the page's cards are read whole. The memory of a page is a page's.
extension PostgresCardStore {
    public func page(_ query: StoredPageQuery) async throws -> StoredPage {
        var seen = Set<String>()
        let sources = query.sources.filter { seen.insert($0).inserted }
        guard !sources.isEmpty, query.offset >= 0, query.limit > 0 else { return query.page(of: try await cards(of: query.sources)) }
        let database = try await migrated()
        if query.order == .price, try await !database.query("""
            SELECT 1 FROM card WHERE user_id = \(StoreUser.default) AND price_inexact AND source = ANY(\(sources)::text[]) LIMIT 1
            """).isEmpty {
            // A price finer than a millionth: the index cannot order it exactly.
            return query.page(of: try await cards(of: sources))
        }
        if let reading = query.reading { return try await markedPage(query, sources: sources, reading: reading, in: database) }
        let total = try await database.query("""
            SELECT coalesce(sum(cards), 0)::bigint FROM card_source_version WHERE source = ANY(\(sources)::text[])
            """).first?.decode(Int.self) ?? 0
        guard query.offset < total else { return StoredPage(cards: [], total: total) }
        let direction = query.descending ? "DESC" : "ASC"
        let inSources = "card.user_id = \(StoreUser.default) AND card.source = ANY($1::text[])"
        let place = "array_position($1::text[], card.source)"
        var ids: [String]
        switch query.order {
        case .feed:
            ids = try await Self.ids(in: database, """
                SELECT card.id FROM card WHERE \(inSources) ORDER BY card.rank \(direction), \(place) \(direction) OFFSET $2 LIMIT $3
                """, sources, query.offset, query.limit)
        case .price, .published:
            // The cards with the key by it, feed order breaking ties; then those without it,
            // in feed order (read only when the page reaches them).
            let column = query.order == .price ? "price_key" : "published"
            ids = try await Self.ids(in: database, """
                SELECT card.id FROM card WHERE \(inSources) AND card.\(column) IS NOT NULL
                ORDER BY card.\(column) \(direction), card.rank, \(place) OFFSET $2 LIMIT $3
                """, sources, query.offset, query.limit)
            if ids.count < query.limit {
                let keyed = !ids.isEmpty ? query.offset + ids.count : try await database.query(PostgresQuery(unsafeSQL: """
                    SELECT count(*)::bigint FROM card WHERE \(inSources) AND card.\(column) IS NOT NULL
                    """, binds: Self.binds(sources))).first?.decode(Int.self) ?? 0
                ids += try await Self.ids(in: database, """
                    SELECT card.id FROM card WHERE \(inSources) AND card.\(column) IS NULL ORDER BY card.rank, \(place) OFFSET $2 LIMIT $3
                    """, sources, max(0, query.offset - keyed), query.limit - ids.count)
            }
        }
        return StoredPage(cards: try await kept(ids, in: database), total: total)
    }

    /// A page of the cards with `reading`'s marks. Each source's list is filtered first and
    /// then interleaved (``StoredPageQuery/reading``), so feed order numbers each source's
    /// marked cards (`n`): the sources' marked rows are numbered in the database, and only
    /// the page's ids leave it. The Unread view newest first — the reader's first page —
    /// reads from the date index from the newest instead (``newestUnread``).
    private func markedPage(_ query: StoredPageQuery, sources: [String], reading: ReadingFilter,
                            in database: PostgresStateDatabase) async throws -> StoredPage {
        let person = person
        let unread = "NOT EXISTS (SELECT 1 FROM card_reading r WHERE r.user_id = \(person) AND r.id = card.id AND r.read_at IS NOT NULL)"
        if reading == .unread, query.order == .published, query.descending,
           let ids = try await newestUnread(query, sources: sources, unread: unread, in: database) {
            let total = try await unreadCount(of: sources, in: database)
            return StoredPage(cards: try await kept(ids, in: database), total: total)
        }
        let marked = switch reading {
        case .unread: unread
        case .starred: "EXISTS (SELECT 1 FROM card_reading r WHERE r.user_id = \(person) AND r.id = card.id AND r.starred_at IS NOT NULL)"
        case .read: "NOT (\(unread))"
        }
        let direction = query.descending ? "DESC" : "ASC"
        let key = switch query.order {
        case .feed: "NULL::double precision"
        case .price: "card.price_key::double precision"
        case .published: "card.published"
        }
        let order = switch query.order {
        case .feed: "n \(direction), place \(direction)"
        // By price or date, ties keep their place in the unfiltered feed order (rank).
        case .price, .published: "key IS NULL, key \(direction), rank, place"
        }
        let rows = try await database.query(PostgresQuery(unsafeSQL: """
            SELECT id, count(*) OVER ()::bigint FROM (
              SELECT card.id, \(key) AS key, array_position($1::text[], card.source) AS place, card.rank,
                     row_number() OVER (PARTITION BY card.source ORDER BY card.rank) AS n
              FROM card WHERE card.user_id = \(StoreUser.default) AND card.source = ANY($1::text[]) AND \(marked)) AS marked
            ORDER BY \(order) OFFSET $2 LIMIT $3
            """, binds: Self.binds(sources, query.offset, query.limit))).map { try $0.decode((String, Int).self) }
        guard let total = rows.first?.1 else {
            let count = try await database.query(PostgresQuery(unsafeSQL: """
                SELECT count(*)::bigint FROM card WHERE card.user_id = \(StoreUser.default) AND card.source = ANY($1::text[]) AND \(marked)
                """, binds: Self.binds(sources))).first?.decode(Int.self) ?? 0
            return StoredPage(cards: [], total: count)
        }
        return StoredPage(cards: try await kept(rows.map(\.0), in: database), total: total)
    }

    /// The ids of the Unread view's page newest first, read from the date index from the
    /// newest (as SQLite's): rows of one date and rank are read whole and ordered by their
    /// source's place; nil when the rows up to the page pass 10,000.
    private func newestUnread(_ query: StoredPageQuery, sources: [String], unread: String,
                              in database: PostgresStateDatabase) async throws -> [String]? {
        let (end, overflow) = query.offset.addingReportingOverflow(query.limit)
        guard !overflow, end <= 10_000 else { return nil }
        let place = Dictionary(sources.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var rows: [(id: String, date: Double, rank: Int, place: Int)] = []
        var limit = end + 1
        while true {
            rows = try await database.query(PostgresQuery(unsafeSQL: """
                SELECT card.id, card.published, card.rank, card.source FROM card
                WHERE card.user_id = \(StoreUser.default) AND card.source = ANY($1::text[]) AND card.published IS NOT NULL AND \(unread)
                ORDER BY card.published DESC, card.rank LIMIT $2
                """, binds: Self.binds(sources, limit))).map {
                let (id, date, rank, source) = try $0.decode((String, Double, Int, String).self)
                return (id, date, rank, place[source] ?? Int.max)
            }
            // Every unread card read, or the round at the page's end read whole.
            if rows.count < limit || (rows[end - 1].date, rows[end - 1].rank) != (rows[limit - 1].date, rows[limit - 1].rank) { break }
            guard limit < 10_000 else { return nil }
            limit = min(limit * 4, 10_000)
        }
        rows.sort { a, b in a.date != b.date ? a.date > b.date : (a.rank, a.place) < (b.rank, b.place) }
        return rows[min(query.offset, rows.count)..<min(end, rows.count)].map(\.id)
    }

    /// The unread cards of `sources` for this person: their cards less the ones read.
    private func unreadCount(of sources: [String], in database: PostgresStateDatabase) async throws -> Int {
        try await database.query("""
            SELECT coalesce(sum(v.cards - coalesce(r.read, 0)), 0)::bigint FROM card_source_version v
            LEFT JOIN card_read_count r ON r.user_id = \(person) AND r.source = v.source
            WHERE v.source = ANY(\(sources)::text[])
            """).first.map { try $0.decode(Int.self) } ?? 0
    }

    /// The kept cards of `ids`, in that order.
    func kept(_ ids: [String], in database: PostgresStateDatabase) async throws -> [KeptCard] {
        guard !ids.isEmpty else { return [] }
        let kept = try await database.query("""
            \(unescaped: Self.selectKept(person)) WHERE card.user_id = \(StoreUser.default) AND card.id = ANY(\(ids)::text[])
            """).map(Self.kept)
        let byID = Dictionary(kept.map { ($0.card.id, $0) }, uniquingKeysWith: { first, _ in first })
        return ids.compactMap { byID[$0] }
    }

    /// The ids a statement over `$1` (the sources), `$2` (an offset) and `$3` (a limit) gives.
    private static func ids(in database: PostgresStateDatabase, _ sql: String, _ sources: [String], _ offset: Int, _ limit: Int) async throws -> [String] {
        try await database.query(PostgresQuery(unsafeSQL: sql, binds: binds(sources, offset, limit))).map { try $0.decode(String.self) }
    }

    private static func binds(_ sources: [String], _ numbers: Int...) -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(sources)
        for number in numbers { bindings.append(number) }
        return bindings
    }
}
