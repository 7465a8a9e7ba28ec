import FeedState
@testable import FeedStateSQLite
import Foundation
import GRDB
import Testing

/// A cache written before the body moved to the end of its row (`v9`) keeps what it
/// holds: the same responses and stamps, read from the new layout.
@Suite struct CacheMigrationTests {
    @Test func aV8CacheKeepsItsResponsesWithTheBodyLast() async throws {
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
        }
        try queue.close()

        let state = try await EngineState.open(.directory(directory), connections: .one)
        #expect(try await state.cache.stamp(key: "feed a") == CacheStamp(storedAt: 1_800_000_000, fetchedAt: 1_800_000_600, maxAge: 60,
                                                                           etag: "\"e1\"", lastModified: "Sat, 21 Nov 2026 10:00:00 GMT"))
        let response = try #require(try await state.cache.response(forKey: "feed a"))
        #expect(response.body == body)
        #expect(response.url == "https://feeds.test/a.xml")
        #expect(response.storedAt == Date(timeIntervalSince1970: 1_800_000_000))

        let columns = try await DatabaseQueue(path: directory.appendingPathComponent("cache.sqlite").path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('http_cache') ORDER BY cid")
        }
        #expect(columns == ["key", "url", "status", "etag", "last_modified", "max_age", "fetched_at", "stored_at", "link", "body_file", "body"])
    }
}
