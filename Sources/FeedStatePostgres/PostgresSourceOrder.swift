import FeedState
import Foundation
import PostgresNIO

/// Pages by source (``SourceRunsPage``), as SQLite makes them: each source's count of the
/// cards the view holds, then the page's slices read from the sources' own index
/// (`card_by_source`) in one statement.
extension PostgresCardStore {
    func sourcePage(_ query: StoredPageQuery, sources: [String], in database: PostgresStateDatabase) async throws -> StoredPage? {
        let person = person
        let user = StoreUser.default
        let counts = try await sourceCounts(of: sources, reading: query.reading, in: database)
        let page = SourceRunsPage(sources: sources, counts: counts, descending: query.descending, offset: query.offset, limit: query.limit)
        guard !page.slices.isEmpty else { return StoredPage(cards: [], total: page.total) }
        let marked = query.reading.map { "AND " + Self.marked($0, person: person) } ?? ""
        var bindings = PostgresBindings()
        bindings.append(page.slices.map(\.source))
        bindings.append(page.slices.map(\.skip))
        bindings.append(page.slices.map(\.take))
        var ids: [String] = []
        for row in try await database.query(PostgresQuery(unsafeSQL: """
            SELECT slice.n, run.id FROM unnest($1::text[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS slice(source, skip, take, n)
            CROSS JOIN LATERAL (
              SELECT card.id, card.rank FROM card WHERE card.user_id = \(user) AND card.source = slice.source \(marked)
              ORDER BY card.rank OFFSET slice.skip LIMIT slice.take) AS run
            ORDER BY slice.n, run.rank
            """, binds: bindings)) {
            ids.append(try row.decode((Int, String).self).1)
        }
        // A count that moved under the read: the caller orders every kept card instead.
        guard ids.count == page.slices.reduce(0, { $0 + $1.take }) else { return nil }
        return StoredPage(cards: try await kept(ids, in: database), total: page.total)
    }

    /// How many cards each of `sources` holds in the view `reading` (all of them when nil):
    /// kept counts, not counted rows, but for the few starred cards.
    private func sourceCounts(of sources: [String], reading: ReadingFilter?, in database: PostgresStateDatabase) async throws -> [String: Int] {
        let counted: PostgresQuery
        switch reading {
        case .unread?:
            return try await unreadCounts(of: sources, in: database)
        case nil:
            counted = "SELECT source, cards::bigint FROM card_source_version WHERE source = ANY(\(sources)::text[])"
        case .read?:
            counted = """
                SELECT v.source, coalesce(r.read, 0)::bigint FROM card_source_version v
                LEFT JOIN card_read_count r ON r.user_id = \(person) AND r.source = v.source WHERE v.source = ANY(\(sources)::text[])
                """
        case .starred?:
            counted = """
                SELECT card.source, count(*)::bigint FROM card_reading r JOIN card ON card.user_id = \(StoreUser.default) AND card.id = r.id
                WHERE r.user_id = \(person) AND r.starred_at IS NOT NULL AND card.source = ANY(\(sources)::text[]) GROUP BY card.source
                """
        }
        return Dictionary(try await database.query(counted).map { try $0.decode((String, Int).self) }, uniquingKeysWith: { first, _ in first })
    }

    /// The condition (over `card`) that a card holds `reading`'s mark for `person`.
    static func marked(_ reading: ReadingFilter, person: Int) -> String {
        let unread = "NOT EXISTS (SELECT 1 FROM card_reading r WHERE r.user_id = \(person) AND r.id = card.id AND r.read_at IS NOT NULL)"
        return switch reading {
        case .unread: unread
        case .starred: "EXISTS (SELECT 1 FROM card_reading r WHERE r.user_id = \(person) AND r.id = card.id AND r.starred_at IS NOT NULL)"
        case .read: "NOT (\(unread))"
        }
    }
}
