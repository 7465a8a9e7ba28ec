import FeedCore
import Foundation
import GRDB
import Synchronization

/// The local state of `aggregate`, in two SQLite files of one private directory (0700,
/// files 0600): `cache.sqlite`, the HTTP cache, which is disposable (a damaged one is
/// moved aside and started afresh), and `state.sqlite`, the digests' memory, which is
/// not (a damaged one is refused with how to recover). WAL mode, so several processes
/// can read while one writes; a busy timeout so a second writer waits; every write is
/// one transaction, so a process killed mid-write leaves the last committed state.
public final class StateStore: Sendable {
    /// `$XDG_CACHE_HOME/aggregate` (`~/.cache/aggregate` when unset).
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let cacheHome = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(home)/.cache"
        return URL(fileURLWithPath: cacheHome).appendingPathComponent("aggregate")
    }

    public let directory: URL
    /// The digest state database, `state.sqlite`.
    public let path: String
    /// The HTTP cache.
    let pool: DatabasePool
    private let digestPool = Mutex<DatabasePool?>(nil)
    /// Things the caller should tell the user (a damaged cache moved aside).
    public let notices: [String]

    /// Opens (creating on first use) the cache in `directory`; the digest state is opened
    /// on first use.
    public init(directory: URL) throws {
        self.directory = directory
        try PrivateFiles.directory(directory)
        path = directory.appendingPathComponent("state.sqlite").path
        let cachePath = directory.appendingPathComponent("cache.sqlite").path
        var notices: [String] = []
        do {
            pool = try Self.open(cachePath, migrator: Self.cacheMigrator)
        } catch let error as DatabaseError where Self.isDamage(error) {
            let aside = cachePath + ".corrupt-" + String(Int(Date().timeIntervalSince1970))
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: cachePath + suffix) {
                try FileManager.default.moveItem(atPath: cachePath + suffix, toPath: aside + suffix)
            }
            notices.append("aggregate: the cache \(cachePath) was damaged (\(error.message ?? "\(error.resultCode)")); moved it to \(aside) and started a fresh one")
            pool = try Self.open(cachePath, migrator: Self.cacheMigrator)
        }
        self.notices = notices
    }

    /// The digests' database. A damaged one throws ``StateStoreError/damaged(path:reason:)``
    /// and is left untouched: it is the only record of what was already reported.
    public var database: DatabasePool {
        get throws {
            try digestPool.withLock { opened in
                if let opened { return opened }
                do {
                    let pool = try Self.open(path, migrator: Self.migrator)
                    try pool.read { db in
                        let check = try String.fetchOne(db, sql: "PRAGMA quick_check(1)") ?? "ok"
                        if check != "ok" { throw StateStoreError.damaged(path: path, reason: check) }
                    }
                    opened = pool
                    return pool
                } catch let error as DatabaseError where Self.isDamage(error) {
                    throw StateStoreError.damaged(path: path, reason: error.message ?? "\(error.resultCode)")
                }
            }
        }
    }

    static func isDamage(_ error: DatabaseError) -> Bool {
        [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode)
    }

    /// Opens and migrates a pool. GRDB checks which migrations are applied outside
    /// their transactions, and two processes switching a new file to WAL race; a file
    /// lock makes opening one process at a time (it is held for milliseconds).
    private static func open(_ path: String, migrator: DatabaseMigrator) throws -> DatabasePool {
        let lock = try FileLock(path: path + ".open-lock", wait: 30)
        defer { withExtendedLifetime(lock) {} }
        try PrivateFiles.file(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        configuration.label = "aggregate-state"
        let pool = try DatabasePool(path: path, configuration: configuration)
        try migrator.migrate(pool)
        return pool
    }

    static var cacheMigrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: http cache", migrate: createCache)
        // `Link: <…>; rel="next"` is how some upstreams page (`paging: link_header`): a
        // cached page must keep it, or a warm walk would stop after one page.
        migrator.registerMigration("v2: link header") { db in
            try db.alter(table: "http_cache") { table in table.add(column: "link", .text) }
        }
        // Pages as their source mapped them (PageMemo), valid while the body they came
        // from is the one stored: `stored_at` changes with a new body, not with a 304.
        migrator.registerMigration("v3: mapped pages") { db in
            try db.alter(table: "http_cache") { table in table.add(column: "stored_at", .double) }
            try db.execute(sql: "UPDATE http_cache SET stored_at = fetched_at")
            try db.create(table: "mapped_page") { table in
                table.primaryKey("key", .text)
                table.column("responses", .text).notNull()
                table.column("page", .blob).notNull()
                table.column("created", .double).notNull()
            }
        }
        return migrator
    }

    static func createCache(_ db: Database) throws {
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

}

/// Why the state could not be used.
public enum StateStoreError: Error, Sendable, CustomStringConvertible {
    case damaged(path: String, reason: String)

    public var description: String {
        switch self {
        case .damaged(let path, let reason):
            "\(path) is damaged (\(reason)). It holds the digests' memory, so it is not replaced: restore it from a backup, or move it aside (mv \(path) \(path).bak) and the next digest run records a fresh baseline"
        }
    }
}

/// State files are private: the directory 0700, files 0600 (they hold cached responses
/// that may be personal, and the digests' memory).
enum PrivateFiles {
    static func directory(_ url: URL) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: url.path)
    }

    /// Creates `path` 0600 if missing (SQLite gives its -wal and -shm files the same mode).
    static func file(_ path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }
}

extension StateStore {
    /// The digest state's migrations (state.sqlite).
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        // v1 is the cache's table, kept here because state.sqlite held the cache before
        // it moved to cache.sqlite; the table is unused in this file.
        migrator.registerMigration("v1: http cache", migrate: createCache)
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
        // A file delivery recorded in the same transaction as the state it reports, and
        // finished (then deleted) by this run or the next: exactly-once file output.
        migrator.registerMigration("v3: pending delivery") { db in
            try db.create(table: "digest_delivery") { table in
                table.primaryKey("digest", .text)
                table.column("path", .text).notNull()
                table.column("text", .text).notNull()
                table.column("created", .double).notNull()
            }
        }
        // When a card was first seen, for feed entries that have no date of their own.
        migrator.registerMigration("v4: first seen") { db in
            try db.create(table: "first_seen") { table in
                table.primaryKey("card_id", .text)
                table.column("seen_at", .double).notNull()
            }
        }
        return migrator
    }
}

extension StateStore {
    /// When this state first saw each card of `ids`, recording now for the ones it had
    /// not seen: the date a feed entry without `published` keeps from run to run.
    public func firstSeen(_ ids: [String], now: Date = Date()) throws -> [String: Date] {
        guard !ids.isEmpty else { return [:] }
        let pool = try database
        // Read first: on a warm feed every id is known, and readers must not queue for
        // the single writer (`serve` asks on every request).
        var seen = try pool.read { db in try Self.seen(ids, in: db) }
        let missing = ids.filter { seen[$0] == nil }
        guard !missing.isEmpty else { return seen }
        try pool.write { db in
            let insert = try db.makeStatement(sql: "INSERT OR IGNORE INTO first_seen (card_id, seen_at) VALUES (?, ?)")
            for id in missing { try insert.execute(arguments: [id, now.timeIntervalSince1970.rounded(.down)]) }
            seen.merge(try Self.seen(missing, in: db)) { _, stored in stored }
        }
        return seen
    }

    private static func seen(_ ids: [String], in db: Database) throws -> [String: Date] {
        let select = try db.makeStatement(sql: "SELECT seen_at FROM first_seen WHERE card_id = ?")
        var seen: [String: Date] = [:]
        for id in ids {
            if let seconds = try Double.fetchOne(select, arguments: [id]) { seen[id] = Date(timeIntervalSince1970: seconds) }
        }
        return seen
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
    /// The response's `Link` header, which paging may depend on.
    public var link: String?

    /// The stored headers a source may read.
    public var headers: [String: String] {
        link.map { ["link": $0] } ?? [:]
    }
}

extension StateStore {
    /// The cache key of a request: the redacted URL. No secret, nor a hash of one (a
    /// short key could be guessed back from it), is stored; two URLs that differ only in
    /// a secret share one entry.
    public static func cacheKey(for url: URL) -> String {
        url.redactedString
    }

    public func cachedResponse(for url: URL) async throws -> CachedResponse? {
        let key = Self.cacheKey(for: url)
        return try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM http_cache WHERE key = ?", arguments: [key]).map { row in
                CachedResponse(key: row["key"], url: row["url"], status: row["status"], etag: row["etag"],
                               lastModified: row["last_modified"], maxAge: row["max_age"], body: row["body"],
                               fetchedAt: Date(timeIntervalSince1970: row["fetched_at"]), link: row["link"])
            }
        }
    }

    public func store(_ response: HTTPResponse, for url: URL, at date: Date = Date()) async throws {
        let key = Self.cacheKey(for: url)
        let maxAge = CacheControl.maxAge(response.headers["cache-control"])
        try await pool.write { db in
            try db.execute(sql: """
                INSERT INTO http_cache (key, url, status, etag, last_modified, max_age, body, fetched_at, link, stored_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(key) DO UPDATE SET url = excluded.url, status = excluded.status, etag = excluded.etag,
                  last_modified = excluded.last_modified, max_age = excluded.max_age, body = excluded.body,
                  fetched_at = excluded.fetched_at, link = excluded.link, stored_at = excluded.stored_at
                """, arguments: [key, url.redactedString, response.status, response.headers["etag"],
                                 response.headers["last-modified"], maxAge, response.body, date.timeIntervalSince1970,
                                 response.headers["link"], date.timeIntervalSince1970])
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

extension StateStore {
    /// When the body under `key` was stored and last confirmed, without reading the body.
    func cacheStamp(key: String) async throws -> (storedAt: Double, fetchedAt: Double, maxAge: Double?)? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT stored_at, fetched_at, max_age FROM http_cache WHERE key = ?",
                             arguments: [key]).map { row in
                (row["stored_at"] ?? row["fetched_at"], row["fetched_at"], row["max_age"])
            }
        }
    }

    /// A remembered mapped page and the stamps of the responses it was mapped from.
    func mappedPage(key: String) async throws -> (responses: [String: Double], page: Data)? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT responses, page FROM mapped_page WHERE key = ?", arguments: [key]),
                  let responses = try? JSONDecoder().decode([String: Double].self, from: Data((row["responses"] as String).utf8))
            else { return nil }
            return (responses, row["page"])
        }
    }

    /// Stores a mapped page, and drops pages not rewritten for a week (those of an old
    /// build or of a source no longer configured would otherwise stay forever).
    func storeMappedPage(key: String, responses: [String: Double], page: Data, at date: Date = Date()) async throws {
        let stamps = String(decoding: try JSONEncoder().encode(responses), as: UTF8.self)
        let now = date.timeIntervalSince1970
        try await pool.write { db in
            try db.execute(sql: """
                INSERT INTO mapped_page (key, responses, page, created) VALUES (?, ?, ?, ?)
                ON CONFLICT(key) DO UPDATE SET responses = excluded.responses, page = excluded.page, created = excluded.created
                """, arguments: [key, stamps, page, now])
            try db.execute(sql: "DELETE FROM mapped_page WHERE created < ?", arguments: [now - 7 * 86_400])
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
