import FeedState
import Foundation
import PostgresNIO

/// Each person's marks in `card_reading` (as ``SQLiteCardStore`` keeps them).
extension PostgresCardStore: ReadingMarkStore {
    public func marks(of person: Int) -> any ReadingMarkStore {
        PostgresCardStore(database, person: person)
    }

    public func mark(_ ids: [String], _ mark: ReadingMark, at: Date) async throws -> [String] {
        guard !ids.isEmpty else { return [] }
        let (user, person) = (StoreUser.default, person)
        let time = at.timeIntervalSince1970
        return try await migrated().withTransaction { connection in
            let kept = Set(try await PostgresStateDatabase.rows("""
                SELECT id FROM card WHERE user_id = \(user) AND id = ANY(\(ids)::text[])
                """, on: connection).map { try $0.decode(String.self) })
            // A repeated id (apps' overlapping batches, `mark read X X`) is one row to write:
            // PostgreSQL's upsert may not touch a row twice in one statement.
            let marked = ids.filter { kept.contains($0) }
            guard !marked.isEmpty else { return [] }
            switch mark {
            case .read, .star:
                let column = mark == .read ? "read_at" : "starred_at"
                _ = try await PostgresStateDatabase.rows("""
                    INSERT INTO card_reading (user_id, id, \(unescaped: column))
                    SELECT DISTINCT \(person), id, \(time) FROM unnest(\(marked)::text[]) AS t(id)
                    ON CONFLICT (user_id, id) DO UPDATE SET \(unescaped: column) = coalesce(card_reading.\(unescaped: column), excluded.\(unescaped: column))
                    """, on: connection)
            case .unread, .unstar:
                let column = mark == .unread ? "read_at" : "starred_at"
                _ = try await PostgresStateDatabase.rows("""
                    UPDATE card_reading SET \(unescaped: column) = NULL WHERE user_id = \(person) AND id = ANY(\(marked)::text[])
                    """, on: connection)
                _ = try await PostgresStateDatabase.rows("""
                    DELETE FROM card_reading WHERE user_id = \(person) AND id = ANY(\(marked)::text[]) AND read_at IS NULL AND starred_at IS NULL
                    """, on: connection)
            }
            try await Self.marksChanged(person: person, on: connection)
            return marked
        }
    }

    /// Moves `person`'s ``marksVersion()``, in the transaction that changed their marks.
    static func marksChanged(person: Int, on connection: PostgresConnection) async throws {
        _ = try await PostgresStateDatabase.rows("""
            INSERT INTO card_marks_version (user_id, version) VALUES (\(person), 1)
            ON CONFLICT (user_id) DO UPDATE SET version = card_marks_version.version + 1
            """, on: connection)
    }

    public func marksVersion() async throws -> Int {
        try await migrated().query("SELECT version FROM card_marks_version WHERE user_id = \(person)").first?.decode(Int.self) ?? 0
    }

    public func markRead(seenBy: Date, sources: [String]?, at: Date) async throws -> Int {
        let (user, person) = (StoreUser.default, person)
        return try await migrated().withTransaction { connection in
            let rows = try await PostgresStateDatabase.rows("""
                INSERT INTO card_reading (user_id, id, read_at)
                SELECT \(person), card.id, \(at.timeIntervalSince1970) FROM card
                WHERE card.user_id = \(user) AND card.first_seen <= \(seenBy.timeIntervalSince1970)
                  AND (\(sources == nil) OR card.source = ANY(\(sources ?? [])::text[]))
                ON CONFLICT (user_id, id) DO UPDATE SET read_at = excluded.read_at WHERE card_reading.read_at IS NULL
                RETURNING 1
                """, on: connection)
            if !rows.isEmpty { try await Self.marksChanged(person: person, on: connection) }
            return rows.count
        }
    }

    public func unreadCounts() async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try await migrated().query("""
            SELECT v.source, (v.cards - coalesce(r.read, 0))::bigint FROM card_source_version v
            LEFT JOIN card_read_count r ON r.user_id = \(person) AND r.source = v.source
            """) {
            let (source, count) = try row.decode((String, Int).self)
            if count > 0 { counts[source] = count }
        }
        return counts
    }

    public func ids(ofNumbers numbers: [Int64]) async throws -> [Int64: String] {
        guard !numbers.isEmpty else { return [:] }
        var found: [Int64: String] = [:]
        for row in try await migrated().query("""
            SELECT number, id FROM card WHERE user_id = \(StoreUser.default) AND number = ANY(\(numbers)::bigint[])
            """) {
            let (number, id) = try row.decode((Int64, String).self)
            found[number] = id
        }
        return found
    }

    public func numbers(_ filter: ReadingFilter, of sources: [String]) async throws -> [Int64] {
        guard !sources.isEmpty else { return [] }
        let query: PostgresQuery
        switch filter {
        case .unread:
            query = """
            SELECT card.number FROM card LEFT JOIN card_reading reading ON reading.user_id = \(person) AND reading.id = card.id
            WHERE card.user_id = \(StoreUser.default) AND reading.read_at IS NULL AND card.source = ANY(\(sources)::text[]) ORDER BY card.number
            """
        case .read, .starred:
            // A mark's own column: both are constants of ours, never input.
            let markedAt = filter == .read ? "read_at" : "starred_at"
            query = """
            SELECT card.number FROM card_reading reading JOIN card ON card.user_id = \(StoreUser.default) AND card.id = reading.id
            WHERE reading.user_id = \(person) AND reading.\(unescaped: markedAt) IS NOT NULL AND card.source = ANY(\(sources)::text[]) ORDER BY card.number
            """
        }
        return try await migrated().query(query).map { try $0.decode(Int64.self) }
    }

    public func cards(numbered span: CardNumbers, of sources: [String], limit: Int) async throws -> [KeptCard] {
        guard !sources.isEmpty, limit > 0 else { return [] }
        let select = Self.selectKept(person)
        let query: PostgresQuery = switch span {
        case .after(let number): """
            \(unescaped: select) WHERE card.user_id = \(StoreUser.default) AND card.number > \(number) AND card.source = ANY(\(sources)::text[])
            ORDER BY card.number LIMIT \(limit)
            """
        case .before(let number): """
            \(unescaped: select) WHERE card.user_id = \(StoreUser.default) AND card.number < \(number) AND card.source = ANY(\(sources)::text[])
            ORDER BY card.number DESC LIMIT \(limit)
            """
        case .among(let numbers): """
            \(unescaped: select) WHERE card.user_id = \(StoreUser.default) AND card.number = ANY(\(numbers)::bigint[]) AND card.source = ANY(\(sources)::text[])
            ORDER BY card.number LIMIT \(limit)
            """
        }
        return try await migrated().query(query).map(Self.kept)
    }

    public func ids(of source: String) async throws -> [String] {
        try await migrated().query("SELECT id FROM card WHERE user_id = \(StoreUser.default) AND source = \(source)")
            .map { try $0.decode(String.self) }
    }
}
