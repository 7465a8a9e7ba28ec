import FeedState
@testable import FeedStateSQLite
import Foundation
import GRDB
import Testing

/// A cache written before the body moved to the end of its row (`v9`), and then to a table
/// of its own (`v10`), keeps what it holds: the same responses and stamps, read from the
/// new layout.
@Suite struct CacheMigrationTests {
    @Test func aV8CacheKeepsItsResponsesWithTheBodiesApart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: directory.appendingPathComponent("cache.sqlite").path)
        try SQLiteResponseCache.schema.migrator.migrate(queue, upTo: "v8: mapped page expiry index")
        let body = Data(repeating: 0x7B, count: 70_000)
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO http_cache (key, url, status, etag, last_modified, max_age, body, fetched_at, link, stored_at, body_file)
                VALUES ('feed a', 'https://feeds.test/a.xml', 200, '"e1"', 'Sat, 21 Nov 2026 10:00:00 GMT', 60, ?, 1800000600, NULL, 1800000000, NULL)
                """, arguments: [body])
            try db.execute(sql: """
                INSERT INTO mapped_page (key, responses, page, created, page_file) VALUES ('page a', ?, ?, 1800000000, NULL)
                """, arguments: [MappedPageRecord.text(of: ["feed a": 1_800_000_000]), Data(repeating: 0x01, count: 30_000)])
        }
        try queue.close()

        let state = try await EngineState.open(.directory(directory), connections: .one)
        #expect(try await state.cache.stamp(key: "feed a") == CacheStamp(storedAt: 1_800_000_000, fetchedAt: 1_800_000_600, maxAge: 60,
                                                                           etag: "\"e1\"", lastModified: "Sat, 21 Nov 2026 10:00:00 GMT"))
        let response = try #require(try await state.cache.response(forKey: "feed a"))
        #expect(response.body == body)
        #expect(response.url == "https://feeds.test/a.xml")
        #expect(response.storedAt == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(try await state.pageMemo.page(forKey: "page a") == MappedPageRecord(
            key: "page a", responses: ["feed a": 1_800_000_000], page: Data(repeating: 0x01, count: 30_000), created: Date(timeIntervalSince1970: 1_800_000_000)))
        #expect(try await state.pageMemo.responses(forKey: "page a") == ["feed a": 1_800_000_000])

        let (columns, bodies) = try await DatabaseQueue(path: directory.appendingPathComponent("cache.sqlite").path).read { db in
            (try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('http_cache') UNION ALL SELECT name FROM pragma_table_info('mapped_page')"),
             try String.fetchAll(db, sql: """
                SELECT key || ' ' || length(body) FROM http_body UNION ALL SELECT key || ' ' || length(page) FROM mapped_page_body
                """))
        }
        #expect(columns == ["key", "url", "status", "etag", "last_modified", "max_age", "fetched_at", "stored_at", "link", "body_file",
                            "digest", "key", "responses", "created", "page_file"])
        #expect(bodies == ["feed a 70000", "page a 30000"])

        // A 304's touch moves the stamp and leaves the body; forgetting removes both.
        try await state.cache.touch(key: "feed a", fetchedAt: Date(timeIntervalSince1970: 1_800_000_900), maxAge: nil)
        #expect(try await state.cache.response(forKey: "feed a")?.body == body)
        #expect(try await state.cache.stamp(key: "feed a")?.fetchedAt == 1_800_000_900)
        try await state.cache.forget(key: "feed a")
        #expect(try await state.cache.response(forKey: "feed a") == nil)
        // A page a week older than the newest written expires, with its blob.
        try await state.pageMemo.put(MappedPageRecord(key: "page b", responses: [:], page: Data([7]), created: Date(timeIntervalSince1970: 1_800_700_000)))
        #expect(try await state.pageMemo.page(forKey: "page a") == nil)
        let left = try await DatabaseQueue(path: directory.appendingPathComponent("cache.sqlite").path).read { db in
            try String.fetchAll(db, sql: """
                SELECT 'cache ' || key FROM http_cache UNION ALL SELECT 'body ' || key FROM http_body
                UNION ALL SELECT 'page ' || key FROM mapped_page UNION ALL SELECT 'page body ' || key FROM mapped_page_body
                """)
        }
        #expect(left == ["page page b", "page body page b"])
    }

    /// The first-seen log an earlier version kept in `state.sqlite` (issue 60: the card
    /// store keeps first seen) is dropped when the file is next opened.
    @Test func theOldFirstSeenLogIsDropped() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("state.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: """
                CREATE TABLE first_seen (card_id TEXT PRIMARY KEY, seen_at DOUBLE NOT NULL);
                INSERT INTO first_seen VALUES ('shop:a', 1800000000);
                """)
        }
        try queue.close()
        let state = try await EngineState.open(.directory(directory), connections: .one)
        #expect(try await state.accounts.accounts().isEmpty)
        await state.close()
        let tables = try await DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'first_seen'")
        }
        #expect(tables.isEmpty)
    }
}
