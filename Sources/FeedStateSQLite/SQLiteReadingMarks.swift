import FeedState
import Foundation
import GRDB

/// The person's marks in `card_reading`: one row per card read or starred, none for a
/// card that is neither.
extension SQLiteCardStore {
    public func mark(_ ids: [String], _ mark: ReadingMark, at: Date) async throws -> [String] {
        guard !ids.isEmpty else { return [] }
        let user = StoreUser.default
        return try await database.write { db in
            let exists = try db.cachedStatement(sql: "SELECT 1 FROM card WHERE user_id = ? AND id = ?")
            let write = try db.cachedStatement(sql: Self.markStatement(mark))
            let tidy = try db.cachedStatement(sql: "DELETE FROM card_reading WHERE user_id = ? AND id = ? AND read_at IS NULL AND starred_at IS NULL")
            var marked: [String] = []
            for id in ids where try Bool.fetchOne(exists, arguments: [user, id]) == true {
                try write.execute(arguments: mark == .read || mark == .star ? [user, id, at.timeIntervalSince1970] : [user, id])
                try tidy.execute(arguments: [user, id])
                marked.append(id)
            }
            return marked
        }
    }

    /// The statement that sets `mark` for (user, id[, at]): a first read or star keeps its time.
    private static func markStatement(_ mark: ReadingMark) -> String {
        switch mark {
        case .read, .star:
            let column = mark == .read ? "read_at" : "starred_at"
            return """
                INSERT INTO card_reading (user_id, id, \(column)) VALUES (?1, ?2, ?3)
                ON CONFLICT (user_id, id) DO UPDATE SET \(column) = coalesce(card_reading.\(column), excluded.\(column))
                """
        case .unread, .unstar:
            return "UPDATE card_reading SET \(mark == .unread ? "read_at" : "starred_at") = NULL WHERE user_id = ? AND id = ?"
        }
    }

    public func markRead(seenBy: Date, sources: [String]?, at: Date) async throws -> Int {
        let user = StoreUser.default
        return try await database.write { db in
            var sql = """
                INSERT INTO card_reading (user_id, id, read_at)
                SELECT card.user_id, card.id, ? FROM card WHERE card.user_id = ? AND card.first_seen <= ?
                """
            var arguments: StatementArguments = [at.timeIntervalSince1970, user, seenBy.timeIntervalSince1970]
            if let sources {
                sql += " AND card.source IN (\(sources.map { _ in "?" }.joined(separator: ", ")))"
                arguments += StatementArguments(sources)
            }
            sql += " ON CONFLICT (user_id, id) DO UPDATE SET read_at = excluded.read_at WHERE card_reading.read_at IS NULL"
            try db.execute(sql: sql, arguments: arguments)
            return db.changesCount
        }
    }

    public func unreadCounts() async throws -> [String: Int] {
        try await database.read { db in
            var counts: [String: Int] = [:]
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT card.source, count(*) FROM \(Self.keptFrom) WHERE card.user_id = ? AND reading.read_at IS NULL GROUP BY card.source
                """), arguments: [StoreUser.default])
            while let row = try rows.next() { counts[row[0]] = row[1] }
            return counts
        }
    }

    public func ids(of source: String) async throws -> [String] {
        try await database.read { db in
            try String.fetchAll(db, sql: "SELECT id FROM card WHERE user_id = ? AND source = ?", arguments: [StoreUser.default, source])
        }
    }
}
