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
        if query.order == .source {
            if let page = try await sourcePage(query, sources: sources, in: database) { return page }
            return query.page(of: try await cards(of: sources))
        }
        if let reading = query.reading { return try await markedPage(query, sources: sources, reading: reading, in: database) }
        let (total, keptInAll) = try await database.query("""
            SELECT coalesce(sum(cards) FILTER (WHERE source = ANY(\(sources)::text[])), 0)::bigint, coalesce(sum(cards), 0)::bigint
            FROM card_source_version
            """).first?.decode((Int, Int).self) ?? (0, 0)
        guard query.offset < total else { return StoredPage(cards: [], total: total) }
        // When the sources hold every kept card (the reader's and the served feed's usual
        // query), no row needs its source looked up in the 500 names: planning the
        // statements with the list in them took a third of a page's time.
        let inSources = total == keptInAll
            ? "card.user_id = \(StoreUser.default)"
            : "card.user_id = \(StoreUser.default) AND card.source = ANY($1::text[])"
        let window = PageWindow(sources: sources, offset: query.offset, limit: query.limit)
        var ids: [String]
        switch query.order {
        case .title:
            // No index keeps titles (it cost every first recording 5%): one pass over the
            // sources' rows, keeping the page's.
            ids = try await byKeyFromItsEnd(query, as: String.self, sources: sources, unread: nil, in: database) ?? []
        // (By source: made above.)
        case .feed, .source:
            ids = try await window.ids(by: "rank", as: Int.self, where: inSources, descending: query.descending, in: database)
        case .price, .published:
            // The cards with the key by it, feed order breaking ties; then those without it,
            // in feed order (read only when the page reaches them).
            let column = Self.keyColumn(query.order)
            let keyed = "\(inSources) AND card.\(column) IS NOT NULL"
            ids = query.order == .price
                ? try await window.ids(by: column, as: Int64.self, where: keyed, descending: query.descending, in: database)
                : try await window.ids(by: column, as: Double.self, where: keyed, descending: query.descending, in: database)
            if ids.count < query.limit {
                let keyed = !ids.isEmpty ? query.offset + ids.count : try await database.query(PostgresQuery(unsafeSQL: """
                    SELECT count(*)::bigint FROM card WHERE \(inSources) AND card.\(column) IS NOT NULL
                    """, binds: PageWindow.binds(sources))).first?.decode(Int.self) ?? 0
                let rest = PageWindow(sources: sources, offset: max(0, query.offset - keyed), limit: query.limit - ids.count)
                ids += try await rest.ids(by: "rank", as: Int.self, where: "\(inSources) AND card.\(column) IS NULL", descending: false, in: database)
            }
        }
        return StoredPage(cards: try await kept(ids, in: database), total: total)
    }

    /// A page of the cards with `reading`'s marks. Each source's list is filtered first and
    /// then interleaved (``StoredPageQuery/reading``), so feed order numbers each source's
    /// marked cards (`n`): the sources' marked rows are numbered in the database, and only
    /// the page's ids leave it. The Unread view by date (the reader's first page) or price
    /// reads from the key's index instead (``unreadByKey``), in feed order from each
    /// source's first unread cards (``unreadInFeedOrder``).
    private func markedPage(_ query: StoredPageQuery, sources: [String], reading: ReadingFilter,
                            in database: PostgresStateDatabase) async throws -> StoredPage {
        let person = person
        let unread = Self.marked(.unread, person: person)
        let byKey: [String]? = switch query.order {
        case .feed, .source: nil
        case .price: reading == .unread ? try await byKeyFromItsEnd(query, as: Int64.self, sources: sources, unread: unread, in: database) : nil
        case .title: reading == .unread ? try await byKeyFromItsEnd(query, as: String.self, sources: sources, unread: unread, in: database) : nil
        case .published: reading == .unread ? try await byKeyFromItsEnd(query, as: Double.self, sources: sources, unread: unread, in: database) : nil
        }
        if let ids = byKey {
            let total = try await unreadCounts(of: sources, in: database).values.reduce(0, +)
            return StoredPage(cards: try await kept(ids, in: database), total: total)
        }
        if reading == .unread, query.order == .feed, !query.descending,
           let page = try await unreadInFeedOrder(query, sources: sources, unread: unread, in: database) {
            return page
        }
        let marked = Self.marked(reading, person: person)
        let direction = query.descending ? "DESC" : "ASC"
        let key = switch query.order {
        case .feed, .source: "NULL::double precision"
        case .title: "card.title_key"
        case .price: "card.price_key::double precision"
        case .published: "card.published"
        }
        let order = switch query.order {
        case .feed, .source: "n \(direction), place \(direction)"
        // By price or date, ties keep their place in the unfiltered feed order (rank).
        case .price, .published, .title: "key IS NULL, key \(direction), rank, place"
        }
        let rows = try await database.query(PostgresQuery(unsafeSQL: """
            SELECT id, count(*) OVER ()::bigint FROM (
              SELECT card.id, \(key) AS key, array_position($1::text[], card.source) AS place, card.rank,
                     row_number() OVER (PARTITION BY card.source ORDER BY card.rank) AS n
              FROM card WHERE card.user_id = \(StoreUser.default) AND card.source = ANY($1::text[]) AND \(marked)) AS marked
            ORDER BY \(order) OFFSET $2 LIMIT $3
            """, binds: PageWindow.binds(sources, query.offset, query.limit))).map { try $0.decode((String, Int).self) }
        guard let total = rows.first?.1 else {
            let count = try await database.query(PostgresQuery(unsafeSQL: """
                SELECT count(*)::bigint FROM card WHERE card.user_id = \(StoreUser.default) AND card.source = ANY($1::text[]) AND \(marked)
                """, binds: PageWindow.binds(sources))).first?.decode(Int.self) ?? 0
            return StoredPage(cards: [], total: count)
        }
        return StoredPage(cards: try await kept(rows.map(\.0), in: database), total: total)
    }

    /// The ids of a page by a key from its end (as SQLite's ``byKeyFromItsEnd``): the
    /// Unread view (`unread`, its condition) by date or price, read from the key's index
    /// from that end, and any view by title, which no index keeps, in one pass that keeps
    /// the rows up to the page. Rows of one key and rank are read whole and ordered by their
    /// source's place; nil when an index walk's rows up to the page pass 10,000, or when
    /// the page reaches past the priced cards (the unpriced follow in feed order: the caller
    /// numbers them). Every card has a date (an undated one, when it was first seen) and a
    /// title.
    private func byKeyFromItsEnd<Key: PostgresDecodable & Comparable & Sendable>(
        _ query: StoredPageQuery, as: Key.Type, sources: [String], unread: String?, in database: PostgresStateDatabase
    ) async throws -> [String]? where Key._DecodableType == Key {
        let column = Self.keyColumn(query.order)
        // Titles have no index: every statement reads every row, the cap only bounds what is kept.
        let cap = query.order == .title ? Int.max : 10_000
        let (end, overflow) = query.offset.addingReportingOverflow(query.limit)
        guard !overflow, end <= cap else { return nil }
        let place = Dictionary(sources.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var rows: [(id: String, key: Key, rank: Int, place: Int)] = []
        var limit = end + 1
        while true {
            rows = try await database.query(PostgresQuery(unsafeSQL: """
                SELECT card.id, card.\(column), card.rank, card.source FROM card
                WHERE card.user_id = \(StoreUser.default) AND card.source = ANY($1::text[]) AND card.\(column) IS NOT NULL \(unread.map { "AND " + $0 } ?? "")
                ORDER BY card.\(column) \(query.descending ? "DESC" : "ASC"), card.rank LIMIT $2
                """, binds: PageWindow.binds(sources, limit))).map {
                let (id, key, rank, source) = try $0.decode((String, Key, Int, String).self)
                return (id, key, rank, place[source] ?? Int.max)
            }
            // Every row read, or the round at the page's end read whole.
            if rows.count < limit || (rows[end - 1].key, rows[end - 1].rank) != (rows[limit - 1].key, rows[limit - 1].rank) { break }
            guard limit < cap else { return nil }
            limit = min(limit * 4, cap)
        }
        if column == "price_key", rows.count < end { return nil }
        rows.sort { a, b in
            guard a.key != b.key else { return (a.rank, a.place) < (b.rank, b.place) }
            return query.descending ? a.key > b.key : a.key < b.key
        }
        return rows[min(query.offset, rows.count)..<min(end, rows.count)].map(\.id)
    }

    /// The column an order's key is kept in.
    static func keyColumn(_ order: StoredPageQuery.Order) -> String {
        switch order {
        case .price: "price_key"
        case .title: "title_key"
        case .published, .feed, .source: "published"
        }
    }

    /// The unread cards of each of `sources` for this person: its cards less the ones read.
    func unreadCounts(of sources: [String], in database: PostgresStateDatabase) async throws -> [String: Int] {
        let rows = try await database.query("""
            SELECT v.source, (v.cards - coalesce(r.read, 0))::bigint FROM card_source_version v
            LEFT JOIN card_read_count r ON r.user_id = \(person) AND r.source = v.source
            WHERE v.source = ANY(\(sources)::text[])
            """).map { try $0.decode((String, Int).self) }
        return Dictionary(rows, uniquingKeysWith: { first, _ in first })
    }

    /// The Unread view in feed order (``InterleavedPage``): each source's unread count,
    /// then as many of its first unread cards as the page needs, from its own index (one
    /// statement: a lateral read per source).
    private func unreadInFeedOrder(_ query: StoredPageQuery, sources: [String], unread: String,
                                   in database: PostgresStateDatabase) async throws -> StoredPage? {
        let counts = try await unreadCounts(of: sources, in: database)
        let page = InterleavedPage(counts: sources.map { counts[$0] ?? 0 }, offset: query.offset, limit: query.limit)
        var bindings = PostgresBindings()
        bindings.append(sources)
        bindings.append(page.wanted)
        var lists = Array(repeating: [String](), count: sources.count)
        for row in try await database.query(PostgresQuery(unsafeSQL: """
            SELECT s.place, firsts.id FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS s(source, wanted, place)
            CROSS JOIN LATERAL (
              SELECT card.id, card.rank FROM card WHERE card.user_id = \(StoreUser.default) AND card.source = s.source AND \(unread)
              ORDER BY card.rank LIMIT s.wanted) AS firsts
            WHERE s.wanted > 0 ORDER BY s.place, firsts.rank
            """, binds: bindings)) {
            let (place, id) = try row.decode((Int, String).self)
            guard lists.indices.contains(place - 1) else { return nil }
            lists[place - 1].append(id)
        }
        guard let ids = page.page(of: lists) else { return nil }
        return StoredPage(cards: try await kept(ids, in: database), total: page.total)
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
}

/// The ids of one page in an order the indexes keep (a key, then the rank, then the
/// source's place in the query), read as SQLite's pages are: the key at the page's first
/// and last place from the key's index, then the rows between them (ties included), put in
/// order here. Ordering by the source's place in PostgreSQL (`array_position` over the
/// query's sources for every row up to the page) was most of a page's time at 500 sources:
/// 13 ms of page 100's 15.
struct PageWindow {
    /// The query's sources, `$1` of every statement: a source's place breaks ties.
    var sources: [String]
    var offset: Int
    var limit: Int

    /// The page's ids among the rows `filter` (over `card`, with the sources as `$1`)
    /// selects, ordered by `key` (in `descending` order) and then feed order: for the rank
    /// itself, the sources' places in the same direction; for a price or a date, the rank
    /// and then the place, ascending (as ``StoredPageQuery`` orders ties).
    func ids<Key: PostgresDecodable & PostgresEncodable & Comparable & Sendable>(
        by key: String, as: Key.Type, where filter: String, descending: Bool, in database: PostgresStateDatabase
    ) async throws -> [String] where Key._DecodableType == Key {
        let (end, overflow) = offset.addingReportingOverflow(limit)
        guard offset >= 0, limit > 0, !overflow else { return [] }
        let direction = descending ? "DESC" : "ASC"
        let (before, beyond) = descending ? (">", "<") : ("<", ">")
        // Each edge is read from the key's index (its rows hold the source): no card is
        // read. The rows ahead of the first edge are at most `offset`, and counted with that
        // bound: unbounded, PostgreSQL planned the count for all the cards and started
        // parallel workers for it, 8 ms of a 10 ms statement.
        func edge(_ place: String) -> String {
            "(SELECT card.\(key) FROM card WHERE \(filter) ORDER BY card.\(key) \(direction) OFFSET \(place) LIMIT 1)"
        }
        guard let edges = try await database.query(PostgresQuery(unsafeSQL: """
            SELECT edge.first, \(edge("$3")), (SELECT count(*) FROM (
              SELECT 1 FROM card WHERE \(filter) AND card.\(key) \(before) edge.first ORDER BY card.\(key) \(direction) LIMIT $2) AS ahead)::bigint
            FROM (SELECT \(edge("$2")) AS first) AS edge
            """, binds: Self.binds(sources, offset, end - 1))).first else { return [] }
        let (edgeFirst, last, ahead) = try edges.decode((Key?, Key?, Int).self)
        guard let first = edgeFirst else { return [] }
        var bindings = Self.binds(sources)
        try bindings.append(first)
        var bounds = "card.\(key) \(before == "<" ? ">=" : "<=") $2"
        if let last {
            try bindings.append(last)
            bounds += " AND NOT card.\(key) \(beyond) $3"
        }
        let place = Dictionary(sources.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var rows = try await database.query(PostgresQuery(unsafeSQL: """
            SELECT card.id, card.source, card.rank, card.\(key) FROM card WHERE \(filter) AND \(bounds)
            """, binds: bindings)).map { row in
            let (id, source, rank, value) = try row.decode((String, String, Int, Key).self)
            return (id: id, place: place[source] ?? Int.max, rank: rank, key: value)
        }
        let feedOrder = key == "rank"
        rows.sort { a, b in
            if a.key != b.key { return descending ? a.key > b.key : a.key < b.key }
            if feedOrder { return descending ? a.place > b.place : a.place < b.place }
            return (a.rank, a.place) < (b.rank, b.place)
        }
        let start = min(max(0, offset - ahead), rows.count)
        return rows[start...].prefix(limit).map(\.id)
    }

    /// `sources` as `$1`, then `numbers`.
    static func binds(_ sources: [String], _ numbers: Int...) -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(sources)
        for number in numbers { bindings.append(number) }
        return bindings
    }
}
