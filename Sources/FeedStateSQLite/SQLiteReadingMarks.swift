import FeedState
import Foundation
import GRDB

/// Each person's marks in `card_reading`: one row per person and card read or starred,
/// none for a card that is neither. Cards are the default user's (``StoreUser``).
extension SQLiteCardStore: ReadingMarkStore {
    public func marks(of person: Int) -> any ReadingMarkStore {
        SQLiteCardStore(directory, person: person)
    }

    public func mark(_ ids: [String], _ mark: ReadingMark, at: Date) async throws -> [String] {
        guard !ids.isEmpty else { return [] }
        let (user, person) = (StoreUser.default, person)
        // The ids go in as one JSON array, read by json_each: a statement for all of them,
        // where three per id made marking 10,000 cards cost a quarter of a second.
        let wanted = try JSONList.text(ids)
        return try await database.write { db in
            let known = try Set(String.fetchAll(db.cachedStatement(sql: """
                SELECT card.id FROM json_each(?2) AS wanted CROSS JOIN card ON card.user_id = ?1 AND card.id = wanted.value
                """), arguments: [user, wanted]))
            switch mark {
            case .read, .star:
                // A first read or star keeps its time.
                let column = mark == .read ? "read_at" : "starred_at"
                try db.cachedStatement(sql: """
                    INSERT INTO card_reading (user_id, id, \(column))
                    SELECT ?4, card.id, ?3 FROM json_each(?2) AS wanted CROSS JOIN card ON card.user_id = ?1 AND card.id = wanted.value
                    WHERE true ON CONFLICT (user_id, id) DO UPDATE SET \(column) = coalesce(card_reading.\(column), excluded.\(column))
                    """).execute(arguments: [user, wanted, at.timeIntervalSince1970, person])
            case .unread, .unstar:
                try db.cachedStatement(sql: """
                    UPDATE card_reading SET \(mark == .unread ? "read_at" : "starred_at") = NULL
                    WHERE user_id = ?1 AND id IN (SELECT value FROM json_each(?2))
                    """).execute(arguments: [person, wanted])
                // A card with no mark left has no row.
                try db.cachedStatement(sql: """
                    DELETE FROM card_reading WHERE user_id = ?1 AND id IN (SELECT value FROM json_each(?2)) AND read_at IS NULL AND starred_at IS NULL
                    """).execute(arguments: [person, wanted])
            }
            if !known.isEmpty { try Self.marksChanged(db, person: person) }
            return ids.filter(known.contains)
        }
    }

    /// Moves `person`'s ``marksVersion()``, in the transaction that changed their marks.
    static func marksChanged(_ db: Database, person: Int) throws {
        try db.cachedStatement(sql: """
            INSERT INTO card_marks_version (user_id, version) VALUES (?, 1) ON CONFLICT (user_id) DO UPDATE SET version = version + 1
            """).execute(arguments: [person])
    }

    public func marksVersion() async throws -> Int {
        let person = person
        return try await database.read { db in
            try Int.fetchOne(db.cachedStatement(sql: "SELECT version FROM card_marks_version WHERE user_id = ?"), arguments: [person]) ?? 0
        }
    }

    public func markRead(seenBy: Date, sources: [String]?, at: Date) async throws -> Int {
        let (user, person) = (StoreUser.default, person)
        return try await database.write { db in
            var sql = """
                INSERT INTO card_reading (user_id, id, read_at)
                SELECT ?, card.id, ? FROM card WHERE card.user_id = ? AND card.first_seen <= ?
                """
            var arguments: StatementArguments = [person, at.timeIntervalSince1970, user, seenBy.timeIntervalSince1970]
            if let sources {
                sql += " AND card.source IN (\(sources.map { _ in "?" }.joined(separator: ", ")))"
                arguments += StatementArguments(sources)
            }
            sql += " ON CONFLICT (user_id, id) DO UPDATE SET read_at = excluded.read_at WHERE card_reading.read_at IS NULL"
            try db.execute(sql: sql, arguments: arguments)
            let marked = db.changesCount
            if marked > 0 { try Self.marksChanged(db, person: person) }
            return marked
        }
    }

    /// Each source's cards (kept by every write) less its read ones (kept by triggers on
    /// every change of a mark and every card removed): two small tables read, where
    /// counting the unread cards of a million-card store took most of a second.
    public func unreadCounts() async throws -> [String: Int] {
        let person = person
        return try await database.read { db in
            var counts: [String: Int] = [:]
            let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT v.source, \(Self.unread) FROM \(Self.unreadFrom)"),
                                           arguments: [person])
            while let row = try rows.next() {
                let unread: Int = row[1]
                if unread > 0 { counts[row[0]] = unread }
            }
            return counts
        }
    }

    /// A source's unread cards, over ``unreadFrom`` (the person bound first).
    static let unread = "v.cards - coalesce(r.read, 0)"
    static let unreadFrom = "card_source_version v LEFT JOIN card_read_count r ON r.user_id = ? AND r.source = v.source"

    /// `card_read_count`: each source's read cards, moved by triggers, so a source's unread
    /// count is its card count less this, whatever changed a mark or removed a card.
    static func createReadCounts(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE card_read_count (
              user_id INTEGER NOT NULL, source TEXT NOT NULL, read INTEGER NOT NULL,
              PRIMARY KEY (user_id, source)) WITHOUT ROWID;
            INSERT INTO card_read_count (user_id, source, read)
              SELECT card.user_id, card.source, count(*) FROM card
              JOIN card_reading reading ON reading.user_id = card.user_id AND reading.id = card.id
              WHERE reading.read_at IS NOT NULL GROUP BY card.user_id, card.source;
            """)
    }

    /// The triggers that keep `card_read_count`, per person: a card is looked up under the
    /// default user (cards are everyone's), and a card removed takes one read off each
    /// person who read it.
    static func createReadCountTriggers(_ db: Database) throws {
        let cards = StoreUser.default
        try db.execute(sql: """
            CREATE TRIGGER card_read_marked AFTER INSERT ON card_reading WHEN new.read_at IS NOT NULL BEGIN
              INSERT INTO card_read_count (user_id, source, read)
                SELECT new.user_id, source, 1 FROM card WHERE user_id = \(cards) AND id = new.id
                ON CONFLICT (user_id, source) DO UPDATE SET read = read + 1;
            END;
            CREATE TRIGGER card_read_changed AFTER UPDATE OF read_at ON card_reading
              WHEN (old.read_at IS NULL) <> (new.read_at IS NULL) BEGIN
              INSERT INTO card_read_count (user_id, source, read)
                SELECT new.user_id, source, CASE WHEN new.read_at IS NULL THEN -1 ELSE 1 END FROM card WHERE user_id = \(cards) AND id = new.id
                ON CONFLICT (user_id, source) DO UPDATE SET read = read + excluded.read;
            END;
            CREATE TRIGGER card_read_unmarked AFTER DELETE ON card_reading WHEN old.read_at IS NOT NULL BEGIN
              UPDATE card_read_count SET read = read - 1
              WHERE user_id = old.user_id AND source = (SELECT source FROM card WHERE user_id = \(cards) AND id = old.id);
            END;
            CREATE TRIGGER card_read_removed AFTER DELETE ON card BEGIN
              UPDATE card_read_count SET read = read - 1
              WHERE source = old.source AND user_id IN (SELECT user_id FROM card_reading WHERE id = old.id AND read_at IS NOT NULL);
            END;
            """)
    }

    public func ids(ofNumbers numbers: [Int64]) async throws -> [Int64: String] {
        guard !numbers.isEmpty else { return [:] }
        let wanted = try JSONList.text(numbers)
        return try await database.read { db in
            var found: [Int64: String] = [:]
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT card.number, card.id FROM json_each(?2) AS wanted CROSS JOIN card ON card.number = wanted.value AND card.user_id = ?1
                """), arguments: [StoreUser.default, wanted])
            while let row = try rows.next() { found[row[0]] = row[1] }
            return found
        }
    }

    public func numbers(_ filter: ReadingFilter, of sources: [String]) async throws -> [Int64] {
        guard !sources.isEmpty else { return [] }
        let inSources = try JSONList.text(sources)
        let person = person
        // Unread is every card without a read mark; read and starred start from the marks.
        let sql = switch filter {
        case .unread: """
            SELECT card.number FROM \(Self.keptFrom(person)) WHERE card.user_id = ? AND reading.read_at IS NULL
              AND card.source IN (SELECT value FROM json_each(?)) ORDER BY card.number
            """
        case .read, .starred: """
            SELECT card.number FROM card_reading reading JOIN card ON card.user_id = ? AND card.id = reading.id
            WHERE reading.user_id = \(person) AND reading.\(filter == .read ? "read_at" : "starred_at") IS NOT NULL
              AND card.source IN (SELECT value FROM json_each(?)) ORDER BY card.number
            """
        }
        return try await database.read { db in
            try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: [StoreUser.default, inSources])
        }
    }

    public func ids(of source: String) async throws -> [String] {
        try await database.read { db in
            try String.fetchAll(db, sql: "SELECT id FROM card WHERE user_id = ? AND source = ?", arguments: [StoreUser.default, source])
        }
    }
}
