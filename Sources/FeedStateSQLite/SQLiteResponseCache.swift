import FeedState
import Foundation
import GRDB

/// The ``ResponseCache`` in `cache.sqlite` of a ``SQLiteStateDirectory``.
public struct SQLiteResponseCache: ResponseCache {
    let pool: any DatabaseWriter
    let bodies: BodyFiles

    public init(_ directory: SQLiteStateDirectory) {
        pool = directory.cacheDatabase
        bodies = BodyFiles(in: directory)
    }

    /// The tables ``schema`` makes: a cache missing one is rebuilt.
    static let tables = ["http_cache", "http_body", "mapped_page", "mapped_page_body", "cache_secret"]

    static let schema: SQLiteSchema = {
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
        // Large bodies live in files (BodyFiles): the row names the file, `body` is empty.
        migrator.registerMigration("v5: body files") { db in
            try db.alter(table: "http_cache") { table in table.add(column: "body_file", .text) }
        }
        // Large mapped pages live in files too: SQLite held two more copies of a 4 MB page
        // while writing it (the bound blob and the record), at the peak of a large run.
        migrator.registerMigration("v6: mapped page files") { db in
            try db.alter(table: "mapped_page") { table in table.add(column: "page_file", .text) }
        }
        // Keys name the source and hash the credentials (RequestIdentity) with a secret
        // kept here; entries under the old keys (the redacted URL alone) are dropped.
        migrator.registerMigration("v7: request identities") { db in
            try db.create(table: "cache_secret") { table in
                table.primaryKey("id", .integer).check { $0 == 1 }
                table.column("secret", .blob).notNull()
            }
            try db.execute(sql: "DELETE FROM http_cache")
            try db.execute(sql: "DELETE FROM mapped_page")
        }
        // Expired pages are found by `created` after every write: without an index each
        // write read every page row through its blob (a cold run of 500 feeds spent a
        // fifth of its time there). PostgreSQL has had this index from the start.
        migrator.registerMigration("v8: mapped page expiry index") { db in
            try db.create(index: "mapped_page_created", on: "mapped_page", columns: ["created"])
        }
        // The body last: a row's columns are read in order, and the stamp's columns came
        // after a body of tens of KiB, in its overflow page. Each stamp lookup and each
        // 304's touch read and wrote that 64 KiB page too (a warm refresh of 500 feeds:
        // 1,900 page reads and 1,500 writes; 920 and 240 with the body last).
        migrator.registerMigration("v9: body last") { db in
            try db.execute(sql: """
                CREATE TABLE http_cache_v9 (
                  key TEXT PRIMARY KEY NOT NULL, url TEXT NOT NULL, status INTEGER NOT NULL, etag TEXT, last_modified TEXT,
                  max_age DOUBLE, fetched_at DOUBLE NOT NULL, stored_at DOUBLE, link TEXT, body_file TEXT, body BLOB NOT NULL);
                INSERT INTO http_cache_v9 (key, url, status, etag, last_modified, max_age, fetched_at, stored_at, link, body_file, body)
                  SELECT key, url, status, etag, last_modified, max_age, fetched_at, stored_at, link, body_file, body FROM http_cache;
                DROP TABLE http_cache;
                ALTER TABLE http_cache_v9 RENAME TO http_cache;
                """)
        }
        // Bodies and mapped pages in tables of their own. A blob of tens of KiB filled its
        // row's 64 KiB leaf page, so every stamp lookup, 304 touch and memo check read that
        // page (and a touch wrote it back): a warm refresh of 500 feeds read 54 MB to learn
        // 500 stamps, and 16 MB more for 500 memo rows. Stamps and memo rows now sit a few
        // hundred to a page.
        migrator.registerMigration("v10: blobs apart") { db in
            try db.execute(sql: """
                CREATE TABLE http_body (key TEXT PRIMARY KEY NOT NULL, body BLOB NOT NULL);
                INSERT INTO http_body (key, body) SELECT key, body FROM http_cache;
                CREATE TABLE http_cache_v10 (
                  key TEXT PRIMARY KEY NOT NULL, url TEXT NOT NULL, status INTEGER NOT NULL, etag TEXT, last_modified TEXT,
                  max_age DOUBLE, fetched_at DOUBLE NOT NULL, stored_at DOUBLE, link TEXT, body_file TEXT);
                INSERT INTO http_cache_v10 (key, url, status, etag, last_modified, max_age, fetched_at, stored_at, link, body_file)
                  SELECT key, url, status, etag, last_modified, max_age, fetched_at, stored_at, link, body_file FROM http_cache;
                DROP TABLE http_cache;
                ALTER TABLE http_cache_v10 RENAME TO http_cache;

                CREATE TABLE mapped_page_body (key TEXT PRIMARY KEY NOT NULL, page BLOB NOT NULL);
                INSERT INTO mapped_page_body (key, page) SELECT key, page FROM mapped_page;
                CREATE TABLE mapped_page_v10 (key TEXT PRIMARY KEY NOT NULL, responses TEXT NOT NULL, created DOUBLE NOT NULL, page_file TEXT);
                INSERT INTO mapped_page_v10 (key, responses, created, page_file) SELECT key, responses, created, page_file FROM mapped_page;
                DROP TABLE mapped_page;
                ALTER TABLE mapped_page_v10 RENAME TO mapped_page;
                CREATE INDEX mapped_page_created ON mapped_page (created);
                """)
        }
        // What each body holds (CachedResponse.digest): listings are named by it.
        migrator.registerMigration("v11: body digests") { db in
            try db.alter(table: "http_cache") { table in table.add(column: "digest", .text) }
        }
        return SQLiteSchema(name: "cache", migrator: migrator)
    }()

    // The lookups are one SELECT each, which SQLite runs in a read transaction of its own:
    // GRDB's `read` adds a read-only switch and a savepoint around it, four statements
    // more per lookup, and a run of 500 sources makes a thousand lookups before its first
    // request is sent.

    public func response(forKey key: String) async throws -> CachedResponse? {
        let found = try await pool.unsafeRead { db -> (CachedResponse, bodyFile: String?)? in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT http_cache.*, http_body.body FROM http_cache JOIN http_body USING (key) WHERE key = ?
                """), arguments: [key]) else { return nil }
            // A row with values of the wrong type is a miss, fetched and stored again.
            do {
                let fetchedAt = try row.decode(Double.self, forColumn: "fetched_at")
                let storedAt = try row.decode(Double?.self, forColumn: "stored_at")
                let response = CachedResponse(
                    key: try row.decode(String.self, forColumn: "key"), url: try row.decode(String.self, forColumn: "url"),
                    status: try row.decode(Int.self, forColumn: "status"), etag: try row.decode(String?.self, forColumn: "etag"),
                    lastModified: try row.decode(String?.self, forColumn: "last_modified"),
                    maxAge: try row.decode(Double?.self, forColumn: "max_age"), body: try row.decode(Data.self, forColumn: "body"),
                    fetchedAt: Date(timeIntervalSince1970: fetchedAt), storedAt: Date(timeIntervalSince1970: storedAt ?? fetchedAt),
                    link: try row.decode(String?.self, forColumn: "link"), digest: try row.decode(String?.self, forColumn: "digest"))
                return (response, try row.decode(String?.self, forColumn: "body_file"))
            } catch is RowDecodingError {
                return nil
            }
        }
        guard let found else { return nil }
        var response = found.0
        if let bodyFile = found.bodyFile {
            // A file gone or cut short is a miss: the next fetch stores the body again.
            guard let body = bodies.read(bodyFile) else { return nil }
            response.body = body
        }
        return response
    }

    /// Stores `response`; a large body goes to a file of its own (``BodyFiles``).
    public func put(_ response: CachedResponse) async throws {
        try await apply([.put(response)])
    }

    public func touch(key: String, fetchedAt: Date, maxAge: Double?) async throws {
        try await apply([.touch(key: key, fetchedAt: fetchedAt, maxAge: maxAge)])
    }

    public func forget(key: String) async throws {
        try await apply([.forget(key: key)])
    }

    /// The writes in one transaction. Large bodies are written to their files first; the
    /// files of replaced or forgotten rows are removed once the transaction is done.
    public func apply(_ writes: [CacheWrite]) async throws {
        var bodyFiles: [Int: String] = [:]
        do {
            for (index, write) in writes.enumerated() {
                if case .put(let response) = write, response.body.count >= BodyFiles.threshold {
                    bodyFiles[index] = try bodies.write(response.body)
                }
            }
        } catch {
            for file in bodyFiles.values { bodies.remove(file) }
            throw error
        }
        let replaced: [String]
        do {
            replaced = try await pool.write { [bodyFiles] db in
                var replaced: [String] = []
                for (index, write) in writes.enumerated() {
                    switch write {
                    case .put(let response):
                        if let previous = try Self.bodyFile(forKey: response.key, in: db) { replaced.append(previous) }
                        let bodyFile = bodyFiles[index]
                        try db.cachedStatement(sql: """
                            INSERT INTO http_cache (key, url, status, etag, last_modified, max_age, fetched_at, link, stored_at, body_file, digest)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                            ON CONFLICT(key) DO UPDATE SET url = excluded.url, status = excluded.status, etag = excluded.etag,
                              last_modified = excluded.last_modified, max_age = excluded.max_age,
                              fetched_at = excluded.fetched_at, link = excluded.link, stored_at = excluded.stored_at,
                              body_file = excluded.body_file, digest = excluded.digest
                            """).execute(arguments: [
                                response.key, response.url, response.status, response.etag, response.lastModified,
                                response.maxAge, response.fetchedAt.timeIntervalSince1970,
                                response.link, response.storedAt.timeIntervalSince1970, bodyFile, response.digest])
                        try db.cachedStatement(sql: """
                            INSERT INTO http_body (key, body) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET body = excluded.body
                            """).execute(arguments: [response.key, bodyFile == nil ? response.body : Data()])
                    case .touch(let key, let fetchedAt, let maxAge):
                        try db.cachedStatement(sql: "UPDATE http_cache SET fetched_at = ?, max_age = ? WHERE key = ?")
                            .execute(arguments: [fetchedAt.timeIntervalSince1970, maxAge, key])
                    case .forget(let key):
                        if let previous = try Self.bodyFile(forKey: key, in: db) { replaced.append(previous) }
                        try db.cachedStatement(sql: "DELETE FROM http_cache WHERE key = ?").execute(arguments: [key])
                        try db.cachedStatement(sql: "DELETE FROM http_body WHERE key = ?").execute(arguments: [key])
                    }
                }
                return replaced
            }
        } catch {
            for file in bodyFiles.values { bodies.remove(file) }
            throw error
        }
        for file in replaced { bodies.remove(file) }
        if !bodyFiles.isEmpty {
            let named = try await pool.read { db in
                Set(try String.fetchAll(db, sql: """
                    SELECT body_file FROM http_cache WHERE body_file IS NOT NULL
                    UNION ALL SELECT page_file FROM mapped_page WHERE page_file IS NOT NULL
                    """))
            }
            bodies.sweep(keeping: named)
        }
    }

    private static func bodyFile(forKey key: String, in db: Database) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT body_file FROM http_cache WHERE key = ?"), arguments: [key])
    }

    public func stamp(key: String) async throws -> CacheStamp? {
        try await pool.unsafeRead { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT stored_at, fetched_at, max_age, etag, last_modified, digest FROM http_cache WHERE key = ?
                """), arguments: [key]) else { return nil }
            do {
                let fetchedAt = try row.decode(Double.self, forColumn: "fetched_at")
                return CacheStamp(storedAt: try row.decode(Double?.self, forColumn: "stored_at") ?? fetchedAt, fetchedAt: fetchedAt,
                                  maxAge: try row.decode(Double?.self, forColumn: "max_age"),
                                  etag: try row.decode(String?.self, forColumn: "etag"),
                                  lastModified: try row.decode(String?.self, forColumn: "last_modified"),
                                  digest: try row.decode(String?.self, forColumn: "digest"))
            } catch is RowDecodingError {
                return nil
            }
        }
    }

    public func identitySecret() async throws -> Data {
        let made = RequestIdentity.newSecret()
        return try await pool.write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO cache_secret (id, secret) VALUES (1, ?)", arguments: [made])
            let secret = try Row.fetchOne(db, sql: "SELECT secret FROM cache_secret WHERE id = 1")
                .flatMap { row in try? row.decode(Data.self, forColumn: "secret") }
            guard let secret, secret.count >= 16 else {
                // A damaged secret: a new one (every key changes, so the cache starts over).
                try db.execute(sql: "UPDATE cache_secret SET secret = ? WHERE id = 1", arguments: [made])
                return made
            }
            return secret
        }
    }
}

/// The ``PageMemoStore`` in `cache.sqlite`, beside the responses its pages came from; a
/// large page is a file in `bodies/`, as a large body is.
public struct SQLitePageMemoStore: PageMemoStore {
    let pool: any DatabaseWriter
    let bodies: BodyFiles

    public init(_ directory: SQLiteStateDirectory) {
        pool = directory.cacheDatabase
        bodies = BodyFiles(in: directory)
    }

    public func page(forKey key: String) async throws -> MappedPageRecord? {
        let found = try await pool.unsafeRead { db -> (MappedPageRecord, pageFile: String?)? in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                    SELECT responses, page, page_file, created FROM mapped_page JOIN mapped_page_body USING (key) WHERE key = ?
                    """), arguments: [key]),
                  let text = try? row.decode(String.self, forColumn: "responses"), let responses = MappedPageRecord.responses(fromText: text),
                  let page = try? row.decode(Data.self, forColumn: "page"), let created = try? row.decode(Double.self, forColumn: "created")
            else { return nil }
            // A value of the wrong type is a miss; NULL is a page kept in its row.
            let pageFile: String?
            do { pageFile = try row.decode(String?.self, forColumn: "page_file") } catch { return nil }
            return (MappedPageRecord(key: key, responses: responses, page: page, created: Date(timeIntervalSince1970: created)), pageFile)
        }
        guard var record = found?.0 else { return nil }
        if let pageFile = found?.pageFile {
            // A file gone or cut short is a miss: the page is mapped again from its response.
            guard let page = bodies.read(pageFile) else { return nil }
            record.page = page
        }
        return record
    }

    public func responses(forKey key: String) async throws -> [String: Double]? {
        try await pool.unsafeRead { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT responses FROM mapped_page WHERE key = ?"), arguments: [key])
                .flatMap(MappedPageRecord.responses(fromText:))
        }
    }

    public func put(_ page: MappedPageRecord) async throws {
        try await put([page])
    }

    /// The pages in one transaction; a large page is a file, written first.
    public func put(_ pages: [MappedPageRecord]) async throws {
        guard let newest = pages.map(\.created).max() else { return }
        // A page that cannot be a file stays in its row.
        let pageFiles = pages.map { $0.page.count >= BodyFiles.threshold ? try? bodies.write($0.page) : nil }
        let replaced: [String]
        do {
            replaced = try await pool.write { db in
                var replaced: [String] = []
                for (page, pageFile) in zip(pages, pageFiles) {
                    if let previous = try String.fetchOne(db.cachedStatement(sql: "SELECT page_file FROM mapped_page WHERE key = ?"),
                                                          arguments: [page.key]) {
                        replaced.append(previous)
                    }
                    try db.cachedStatement(sql: """
                        INSERT INTO mapped_page (key, responses, page_file, created) VALUES (?, ?, ?, ?)
                        ON CONFLICT(key) DO UPDATE SET responses = excluded.responses, page_file = excluded.page_file, created = excluded.created
                        """).execute(arguments: [page.key, page.responsesText, pageFile, page.created.timeIntervalSince1970])
                    try db.cachedStatement(sql: """
                        INSERT INTO mapped_page_body (key, page) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET page = excluded.page
                        """).execute(arguments: [page.key, pageFile == nil ? page.page : Data()])
                }
                let expiry = newest.timeIntervalSince1970 - MappedPageRecord.lifetime
                replaced += try String.fetchAll(db, sql: "SELECT page_file FROM mapped_page WHERE created < ? AND page_file IS NOT NULL",
                                                arguments: [expiry])
                try db.execute(sql: "DELETE FROM mapped_page_body WHERE key IN (SELECT key FROM mapped_page WHERE created < ?)", arguments: [expiry])
                try db.execute(sql: "DELETE FROM mapped_page WHERE created < ?", arguments: [expiry])
                return replaced
            }
        } catch {
            for file in pageFiles { bodies.remove(file) }
            throw error
        }
        for file in replaced { bodies.remove(file) }
    }
}
