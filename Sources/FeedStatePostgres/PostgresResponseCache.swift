import FeedState
import Foundation
import PostgresNIO

/// The ``ResponseCache`` and ``PageMemoStore`` in a shared PostgreSQL
/// database: the same tables as the SQLite files, so every host reads what any host fetched.
public struct PostgresResponseCache: ResponseCache, PageMemoStore {
    let database: PostgresStateDatabase

    public init(_ database: PostgresStateDatabase) {
        self.database = database
    }

    static let schema = PostgresSchema(component: "engine", migrations: [
        .init("1: http cache, mapped pages, first seen", [
            """
            CREATE TABLE http_cache (
              key text PRIMARY KEY, url text NOT NULL, status integer NOT NULL, etag text, last_modified text,
              max_age double precision, body bytea NOT NULL, fetched_at double precision NOT NULL,
              stored_at double precision NOT NULL, link text)
            """,
            """
            CREATE TABLE mapped_page (
              key text PRIMARY KEY, responses text NOT NULL, page bytea NOT NULL, created double precision NOT NULL)
            """,
            "CREATE INDEX mapped_page_created ON mapped_page (created)",
            "CREATE TABLE first_seen (card_id text PRIMARY KEY, seen_at double precision NOT NULL)",
        ]),
        // Keys name the source and hash the credentials (RequestIdentity) with a secret
        // every host shares; entries under the old keys (the redacted URL alone) are dropped.
        .init("2: request identities", [
            "CREATE TABLE cache_secret (id integer PRIMARY KEY CHECK (id = 1), secret bytea NOT NULL)",
            "DELETE FROM http_cache",
            "DELETE FROM mapped_page",
        ]),
        // What each body holds (CachedResponse.digest): listings are named by it.
        .init("3: body digests", ["ALTER TABLE http_cache ADD COLUMN digest text"]),
        // The first-seen log of migration 1: the card store keeps first seen now, and the
        // log only grew.
        .init("4: the first-seen log dropped", ["DROP TABLE IF EXISTS first_seen"]),
    ])

    /// Creates the tables this module owns, if another host has not.
    public func migrate() async throws(PostgresStateError) {
        try await database.migrate(Self.schema)
    }

    public func response(forKey key: String) async throws -> CachedResponse? {
        let rows = try await database.query("""
            SELECT key, url, status, etag, last_modified, max_age, body, fetched_at, stored_at, link, digest
            FROM http_cache WHERE key = \(key)
            """)
        guard let row = rows.first else { return nil }
        let (key, url, status, etag, lastModified, maxAge, body, fetchedAt, storedAt, link, digest) = try row.decode(
            (String, String, Int, String?, String?, Double?, Data, Double, Double, String?, String?).self)
        return CachedResponse(key: key, url: url, status: status, etag: etag, lastModified: lastModified, maxAge: maxAge,
                              body: body, fetchedAt: Date(timeIntervalSince1970: fetchedAt),
                              storedAt: Date(timeIntervalSince1970: storedAt), link: link, digest: digest)
    }

    public func put(_ response: CachedResponse) async throws {
        _ = try await database.query(try Self.statement(.put(response)))
    }

    public func touch(key: String, fetchedAt: Date, maxAge: Double?) async throws {
        _ = try await database.query(try Self.statement(.touch(key: key, fetchedAt: fetchedAt, maxAge: maxAge)))
    }

    public func forget(key: String) async throws {
        _ = try await database.query(try Self.statement(.forget(key: key)))
    }

    /// Several writes in one transaction (one commit, not one per response), in key order:
    /// two hosts writing overlapping keys then lock rows in the same order, and one waits
    /// for the other instead of both failing with "deadlock detected". Writes to one key
    /// keep their order (the sort is stable).
    public func apply(_ writes: [CacheWrite]) async throws {
        guard writes.count > 1 else {
            for write in writes { _ = try await database.query(try Self.statement(write)) }
            return
        }
        let ordered = writes.enumerated().sorted { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }.map(\.element)
        try await database.withTransaction { connection in
            for write in ordered { _ = try await PostgresStateDatabase.rows(try Self.statement(write), on: connection) }
        }
    }

    static func statement(_ write: CacheWrite) throws -> PostgresQuery {
        switch write {
        case .put(let response):
            try """
            INSERT INTO http_cache (key, url, status, etag, last_modified, max_age, body, fetched_at, stored_at, link, digest)
            VALUES (\(response.key), \(response.url), \(response.status), \(response.etag), \(response.lastModified),
                    \(response.maxAge), \(response.body), \(response.fetchedAt.timeIntervalSince1970),
                    \(response.storedAt.timeIntervalSince1970), \(response.link), \(response.digest))
            ON CONFLICT (key) DO UPDATE SET url = excluded.url, status = excluded.status, etag = excluded.etag,
              last_modified = excluded.last_modified, max_age = excluded.max_age, body = excluded.body,
              fetched_at = excluded.fetched_at, stored_at = excluded.stored_at, link = excluded.link, digest = excluded.digest
            """
        case .touch(let key, let fetchedAt, let maxAge):
            "UPDATE http_cache SET fetched_at = \(fetchedAt.timeIntervalSince1970), max_age = \(maxAge) WHERE key = \(key)"
        case .forget(let key):
            "DELETE FROM http_cache WHERE key = \(key)"
        }
    }

    public func stamp(key: String) async throws -> CacheStamp? {
        let rows = try await database.query("""
            SELECT stored_at, fetched_at, max_age, etag, last_modified, digest FROM http_cache WHERE key = \(key)
            """)
        guard let row = rows.first else { return nil }
        let (storedAt, fetchedAt, maxAge, etag, lastModified, digest) = try row.decode((Double, Double, Double?, String?, String?, String?).self)
        return CacheStamp(storedAt: storedAt, fetchedAt: fetchedAt, maxAge: maxAge, etag: etag, lastModified: lastModified, digest: digest)
    }

    public func identitySecret() async throws -> Data {
        _ = try await database.query(
            "INSERT INTO cache_secret (id, secret) VALUES (1, \(RequestIdentity.newSecret())) ON CONFLICT (id) DO NOTHING")
        let rows = try await database.query("SELECT secret FROM cache_secret WHERE id = 1")
        guard let row = rows.first, let secret = try? row.decode(Data.self), secret.count >= 16 else {
            throw PostgresStateError.failed("the table cache_secret holds no usable secret")
        }
        return secret
    }

    public func page(forKey key: String) async throws -> MappedPageRecord? {
        let rows = try await database.query("SELECT responses, page, created FROM mapped_page WHERE key = \(key)")
        guard let row = rows.first else { return nil }
        let (responses, page, created) = try row.decode((String, Data, Double).self)
        guard let stamps = MappedPageRecord.responses(fromText: responses) else { return nil }
        return MappedPageRecord(key: key, responses: stamps, page: page, created: Date(timeIntervalSince1970: created))
    }

    public func put(_ page: MappedPageRecord) async throws {
        try await put([page])
    }

    /// The pages in one transaction, in key order (see ``apply(_:)``), then pages not
    /// rewritten for a week dropped, outside it: the sweep touches rows another host may be
    /// rewriting.
    public func put(_ pages: [MappedPageRecord]) async throws {
        guard let newest = pages.map(\.created).max() else { return }
        try await database.withTransaction { connection in
            for page in pages.sorted(by: { $0.key < $1.key }) {
                _ = try await PostgresStateDatabase.rows("""
                    INSERT INTO mapped_page (key, responses, page, created)
                    VALUES (\(page.key), \(page.responsesText), \(page.page), \(page.created.timeIntervalSince1970))
                    ON CONFLICT (key) DO UPDATE SET responses = excluded.responses, page = excluded.page, created = excluded.created
                    """, on: connection)
            }
        }
        _ = try await database.query("DELETE FROM mapped_page WHERE created < \(newest.timeIntervalSince1970 - MappedPageRecord.lifetime)")
    }
}
