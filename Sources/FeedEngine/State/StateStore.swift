import FeedCore
import Foundation
import GRDB

/// The one SQLite database of `aggregate` (cache now; cursors and digest state use the
/// same file). WAL mode, so several processes can read while one writes; a busy timeout
/// so a second writer waits instead of failing with "database is locked"; every write is
/// one transaction, so a process killed mid-write leaves the last committed state.
public final class StateStore: Sendable {
    /// `$XDG_CACHE_HOME/aggregate` (`~/.cache/aggregate` when unset).
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let cacheHome = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(home)/.cache"
        return URL(fileURLWithPath: cacheHome).appendingPathComponent("aggregate")
    }

    public let path: String
    let pool: DatabasePool

    /// The database, for other modules' tables (the digest state).
    public var database: DatabasePool { pool }

    /// Opens (creating on first use) `state.sqlite` in `directory` and migrates it.
    public init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("state.sqlite").path
        pool = try Self.open(path)
    }

    /// Opens and migrates the pool. GRDB checks which migrations are applied outside
    /// their transactions, and two processes switching a new file to WAL race; a file
    /// lock makes opening one process at a time (it is held for milliseconds).
    private static func open(_ path: String) throws -> DatabasePool {
        let lock = try FileLock(path: path + ".open-lock", wait: 30)
        defer { withExtendedLifetime(lock) {} }
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        configuration.label = "aggregate-state"
        let pool = try DatabasePool(path: path, configuration: configuration)
        try migrator.migrate(pool)
        return pool
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: http cache") { db in
            try db.create(table: "http_cache") { table in
                table.primaryKey("key", .text)
                table.column("url", .text).notNull()
                table.column("status", .integer).notNull()
                table.column("etag", .text)
                table.column("last_modified", .text)
                table.column("max_age", .double)
                table.column("body", .blob).notNull()
                table.column("fetched_at", .double).notNull()
            }
        }
        migrator.registerMigration("v2: digest state") { db in
            try db.create(table: "digest_item") { table in
                table.column("digest", .text).notNull()
                table.column("card_id", .text).notNull()
                table.column("source", .text).notNull()
                table.column("first_seen", .double).notNull()
                table.column("last_seen", .double).notNull()
                // The price when this digest last reported the card (or first saw it), as
                // exact decimal text.
                table.column("price", .text)
                table.column("reported", .boolean).notNull().defaults(to: false)
                table.column("present", .boolean).notNull().defaults(to: true)
                // The card as last seen (JSON), to show a removal.
                table.column("card", .text).notNull()
                table.primaryKey(["digest", "card_id"])
            }
            // Sources each digest has seen available: a source's first appearance is a
            // baseline, not a flood of "new".
            try db.create(table: "digest_source") { table in
                table.column("digest", .text).notNull()
                table.column("source", .text).notNull()
                table.column("first_available", .double).notNull()
                table.primaryKey(["digest", "source"])
            }
            try db.create(table: "digest_run") { table in
                table.primaryKey("digest", .text)
                table.column("last_success", .double).notNull()
                table.column("runs", .integer).notNull()
            }
        }
        return migrator
    }
}

/// A stored response and what is needed to revalidate it.
public struct CachedResponse: Sendable, Equatable {
    public var key: String
    /// The URL with secrets redacted (the key never holds a secret either).
    public var url: String
    public var status: Int
    public var etag: String?
    public var lastModified: String?
    /// The upstream's `Cache-Control: max-age`, when it sent one.
    public var maxAge: Double?
    public var body: Data
    public var fetchedAt: Date
}

extension StateStore {
    /// The cache key of a request: the redacted URL, plus a hash of the real URL when
    /// redaction hid something (so two keys never share an entry, and no secret is stored).
    public static func cacheKey(for url: URL) -> String {
        let redacted = url.redactedString
        guard redacted != url.absoluteString else { return redacted }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in url.absoluteString.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return redacted + "#" + String(hash, radix: 16)
    }

    public func cachedResponse(for url: URL) async throws -> CachedResponse? {
        let key = Self.cacheKey(for: url)
        return try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM http_cache WHERE key = ?", arguments: [key]).map { row in
                CachedResponse(key: row["key"], url: row["url"], status: row["status"], etag: row["etag"],
                               lastModified: row["last_modified"], maxAge: row["max_age"], body: row["body"],
                               fetchedAt: Date(timeIntervalSince1970: row["fetched_at"]))
            }
        }
    }

    public func store(_ response: HTTPResponse, for url: URL, at date: Date = Date()) async throws {
        let key = Self.cacheKey(for: url)
        let maxAge = CacheControl.maxAge(response.headers["cache-control"])
        try await pool.write { db in
            try db.execute(sql: """
                INSERT INTO http_cache (key, url, status, etag, last_modified, max_age, body, fetched_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(key) DO UPDATE SET url = excluded.url, status = excluded.status, etag = excluded.etag,
                  last_modified = excluded.last_modified, max_age = excluded.max_age, body = excluded.body,
                  fetched_at = excluded.fetched_at
                """, arguments: [key, url.redactedString, response.status, response.headers["etag"],
                                 response.headers["last-modified"], maxAge, response.body, date.timeIntervalSince1970])
        }
    }

    /// Drops the stored response for `url` (its body no longer parses).
    public func forget(_ url: URL) async throws {
        let key = Self.cacheKey(for: url)
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM http_cache WHERE key = ?", arguments: [key])
        }
    }

    /// Marks a stored response as fresh again after a 304.
    public func revalidated(_ url: URL, headers: [String: String], at date: Date = Date()) async throws {
        let key = Self.cacheKey(for: url)
        let maxAge = CacheControl.maxAge(headers["cache-control"])
        try await pool.write { db in
            try db.execute(sql: "UPDATE http_cache SET fetched_at = ?, max_age = ? WHERE key = ?",
                           arguments: [date.timeIntervalSince1970, maxAge, key])
        }
    }
}

/// The parts of `Cache-Control` the cache uses.
enum CacheControl {
    /// `max-age=N` in seconds; `no-cache`/`no-store` count as 0.
    static func maxAge(_ header: String?) -> Double? {
        guard let header else { return nil }
        for directive in header.lowercased().split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if directive == "no-cache" || directive == "no-store" { return 0 }
            if directive.hasPrefix("max-age="), let seconds = Double(directive.dropFirst("max-age=".count)) {
                return max(0, seconds)
            }
        }
        return nil
    }
}
