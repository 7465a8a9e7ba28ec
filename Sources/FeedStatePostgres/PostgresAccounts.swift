import FeedState
import Foundation
import PostgresNIO

/// The ``AccountStore`` on a shared PostgreSQL state: every replica signs in the same people.
public struct PostgresAccounts: AccountStore {
    let database: PostgresStateDatabase

    public init(_ database: PostgresStateDatabase) {
        self.database = database
    }

    static let schema = PostgresSchema(component: "accounts", migrations: [
        .init("1: accounts", [
            """
            CREATE TABLE account (
              id serial PRIMARY KEY, name text NOT NULL UNIQUE, password_hash text NOT NULL,
              password_version integer NOT NULL, created double precision NOT NULL)
            """,
            """
            CREATE TABLE account_token (
              id text PRIMARY KEY, user_id integer NOT NULL REFERENCES account (id) ON DELETE CASCADE,
              label text NOT NULL, secret_hash text NOT NULL, created double precision NOT NULL)
            """,
            "CREATE INDEX account_token_by_user ON account_token (user_id)",
        ]),
        // A browser's session by the SHA-256 of its id, shared by every replica.
        .init("2: sessions", [
            "CREATE TABLE account_session (key text PRIMARY KEY, value text NOT NULL, expires double precision)",
            "CREATE INDEX account_session_by_expiry ON account_session (expires)",
        ]),
        // Every account could change Sources.yml before roles: each becomes an admin, and
        // their names are kept for the one message that says so.
        .init("3: roles", [
            "ALTER TABLE account ADD COLUMN role text NOT NULL DEFAULT 'admin'",
            "CREATE TABLE account_roles_upgrade (name text NOT NULL)",
            "INSERT INTO account_roles_upgrade (name) SELECT name FROM account",
        ]),
        // When each token last signed a request in (as SQLite's "accounts v4").
        .init("4: token use", ["ALTER TABLE account_token ADD COLUMN last_used double precision"]),
    ])

    func migrated() async throws -> PostgresStateDatabase {
        try await database.migrate(Self.schema)
        return database
    }

    static let accountColumns = "id, name, password_hash, password_version, created, role"

    static func account(_ row: PostgresRow) throws -> Account {
        let (id, name, hash, version, created, role) = try row.decode((Int, String, String, Int, Double, String).self)
        return Account(id: id, name: name, passwordHash: hash, passwordVersion: version, created: Date(timeIntervalSince1970: created),
                       role: AccountRole(rawValue: role) ?? .reader)
    }

    static func token(_ row: PostgresRow) throws -> (AccountToken, String) {
        let (id, user, label, hash, created, used) = try row.decode((String, Int, String, String, Double, Double?).self)
        return (AccountToken(id: id, user: user, label: label, created: Date(timeIntervalSince1970: created),
                             lastUsed: used.map(Date.init(timeIntervalSince1970:))), hash)
    }

    public func add(name: String, passwordHash: String, role: AccountRole?, at: Date) async throws -> Account {
        // The first account is an admin, decided in the insert itself.
        let role = role?.rawValue
        let rows = try await migrated().query("""
            INSERT INTO account (name, password_hash, password_version, created, role)
            SELECT \(name), \(passwordHash), 1, \(at.timeIntervalSince1970),
                   coalesce(\(role), CASE WHEN EXISTS (SELECT 1 FROM account) THEN 'reader' ELSE 'admin' END)
            ON CONFLICT (name) DO NOTHING RETURNING \(unescaped: Self.accountColumns)
            """)
        guard let row = rows.first else { throw AccountError.nameTaken(name) }
        return try Self.account(row)
    }

    public func setRole(named name: String, role: AccountRole) async throws -> Bool {
        try await !migrated().query("UPDATE account SET role = \(role.rawValue) WHERE name = \(name) RETURNING id").isEmpty
    }

    public func takeRolesUpgrade() async throws -> [String] {
        try await migrated().query("DELETE FROM account_roles_upgrade RETURNING name").map { try $0.decode(String.self) }.sorted()
    }

    public func accounts() async throws -> [Account] {
        try await migrated().query("SELECT \(unescaped: Self.accountColumns) FROM account ORDER BY name").map(Self.account)
    }

    public func account(named name: String) async throws -> Account? {
        try await migrated().query("SELECT \(unescaped: Self.accountColumns) FROM account WHERE name = \(name)").first.map(Self.account)
    }

    public func account(id: Int) async throws -> Account? {
        try await migrated().query("SELECT \(unescaped: Self.accountColumns) FROM account WHERE id = \(id)").first.map(Self.account)
    }

    public func remove(named name: String) async throws -> Bool {
        // Tokens go with it (ON DELETE CASCADE).
        try await !migrated().query("DELETE FROM account WHERE name = \(name) RETURNING id").isEmpty
    }

    public func setPassword(named name: String, hash: String) async throws -> Bool {
        try await !migrated().query("""
            UPDATE account SET password_hash = \(hash), password_version = password_version + 1 WHERE name = \(name) RETURNING id
            """).isEmpty
    }

    public func add(_ token: AccountToken, secretHash: String) async throws {
        _ = try await migrated().query("""
            INSERT INTO account_token (id, user_id, label, secret_hash, created)
            VALUES (\(token.id), \(token.user), \(token.label), \(secretHash), \(token.created.timeIntervalSince1970))
            """)
    }

    public func tokens(of user: Int) async throws -> [AccountToken] {
        try await migrated().query("""
            SELECT id, user_id, label, secret_hash, created, last_used FROM account_token WHERE user_id = \(user) ORDER BY created, id
            """).map { try Self.token($0).0 }
    }

    public func revoke(token id: String, of user: Int) async throws -> Bool {
        try await !migrated().query("DELETE FROM account_token WHERE id = \(id) AND user_id = \(user) RETURNING id").isEmpty
    }

    public func markUsed(token id: String, at: Date) async throws {
        let seconds = at.timeIntervalSince1970, since = at.timeIntervalSince1970 - AccountToken.useResolution
        _ = try await migrated().query(
            "UPDATE account_token SET last_used = \(seconds) WHERE id = \(id) AND (last_used IS NULL OR last_used <= \(since))")
    }

    public func token(id: String) async throws -> (token: AccountToken, secretHash: String, account: Account)? {
        guard let row = try await migrated().query("""
            SELECT id, user_id, label, secret_hash, created, last_used FROM account_token WHERE id = \(id)
            """).first else { return nil }
        let (token, hash) = try Self.token(row)
        guard let account = try await account(id: token.user) else { return nil }
        return (token, hash, account)
    }

    public func keepSession(_ key: String, value: String, expires: Date?, replacing: Bool, now: Date) async throws -> Bool {
        let database = try await migrated()
        _ = try await database.query("DELETE FROM account_session WHERE expires <= \(now.timeIntervalSince1970)")
        let seconds = expires?.timeIntervalSince1970
        if replacing {
            _ = try await database.query("""
                INSERT INTO account_session (key, value, expires) VALUES (\(key), \(value), \(seconds))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = coalesce(excluded.expires, account_session.expires)
                """)
            return true
        }
        return try await !database.query("""
            INSERT INTO account_session (key, value, expires) VALUES (\(key), \(value), \(seconds))
            ON CONFLICT (key) DO NOTHING RETURNING key
            """).isEmpty
    }

    public func session(_ key: String, now: Date) async throws -> (value: String, expires: Date?)? {
        guard let row = try await migrated().query("""
            SELECT value, expires FROM account_session WHERE key = \(key) AND (expires IS NULL OR expires > \(now.timeIntervalSince1970))
            """).first else { return nil }
        let (value, expires) = try row.decode((String, Double?).self)
        return (value, expires.map(Date.init(timeIntervalSince1970:)))
    }

    public func endSession(_ key: String) async throws {
        _ = try await migrated().query("DELETE FROM account_session WHERE key = \(key)")
    }
}
