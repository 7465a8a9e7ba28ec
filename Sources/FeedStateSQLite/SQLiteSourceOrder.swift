import FeedState
import Foundation
import GRDB

/// Pages by source (``SourceRunsPage``): each source's count of the cards the view holds,
/// then the page's slices read from the sources' own index (`card_by_source`).
extension SQLiteCardStore {
    func sourcePage(_ query: StoredPageQuery) async throws -> StoredPage? {
        let (path, person) = (directory.cardsPath, person)
        return try await database.read { db -> StoredPage? in
            let counts = try Self.sourceCounts(db, of: query.sources, reading: query.reading, path: path, person: person)
            let page = SourceRunsPage(sources: query.sources, counts: counts, descending: query.descending, offset: query.offset, limit: query.limit)
            let marked = switch query.reading {
            case nil: ""
            case .unread?: "AND reading.read_at IS NULL"
            case .read?: "AND reading.read_at IS NOT NULL"
            case .starred?: "AND reading.starred_at IS NOT NULL"
            }
            let run = try db.cachedStatement(sql: """
                SELECT card.rowid FROM card INDEXED BY card_by_source
                LEFT JOIN card_reading reading ON reading.user_id = \(person) AND reading.id = card.id
                WHERE card.user_id = ? AND card.source = ? \(marked) ORDER BY card.rank LIMIT ? OFFSET ?
                """)
            var rowids: [Int64] = []
            for slice in page.slices {
                let read = try Int64.fetchAll(run, arguments: [StoreUser.default, slice.source, slice.take, slice.skip])
                // A count that moved under the read: the caller orders every kept card instead.
                guard read.count == slice.take else { return nil }
                rowids += read
            }
            return StoredPage(cards: try Self.cards(db, rowids: rowids, path: path, person: person), total: page.total)
        }
    }

    /// How many cards each of `sources` holds in the view `reading` (all of them when nil),
    /// for `person`: kept counts, not counted rows, but for the few starred cards.
    static func sourceCounts(_ db: Database, of sources: [String], reading: ReadingFilter?, path: String, person: Int) throws -> [String: Int] {
        let list = try JSONList.text(sources)
        let (counted, arguments): (String, StatementArguments) = switch reading {
        case nil:
            ("SELECT source, cards AS n FROM card_source_version WHERE source IN (SELECT value FROM json_each(?))", [list])
        case .unread?:
            ("SELECT v.source AS source, \(unread) AS n FROM \(unreadFrom) WHERE v.source IN (SELECT value FROM json_each(?))", [person, list])
        case .read?:
            ("SELECT v.source AS source, coalesce(r.read, 0) AS n FROM \(unreadFrom) WHERE v.source IN (SELECT value FROM json_each(?))",
             [person, list])
        case .starred?:
            ("""
             SELECT card.source AS source, count(*) AS n FROM card_reading reading INDEXED BY card_starred
             CROSS JOIN card ON card.user_id = \(StoreUser.default) AND card.id = reading.id
             WHERE reading.user_id = ? AND reading.starred_at IS NOT NULL AND card.source IN (SELECT value FROM json_each(?))
             GROUP BY card.source
             """, [person, list])
        }
        var counts: [String: Int] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: counted), arguments: arguments) {
            counts[try column(row, "source", path: path)] = try column(row, "n", path: path)
        }
        return counts
    }
}
