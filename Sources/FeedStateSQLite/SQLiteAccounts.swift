import FeedState
import Foundation
import GRDB

/// The ``AccountStore`` in `state.sqlite`: accounts and tokens are small, precious, and
/// belong with the rest of what cannot be fetched again.
public struct SQLiteAccounts: AccountStore {
    let directory: SQLiteStateDirectory

    public init(_ directory: SQLiteStateDirectory) {
        self.directory = directory
    }

    static let schema: SQLiteSchema = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("accounts v1") { db in
            // AUTOINCREMENT: an id is never reused, so marks kept under a removed account's
            // id never become another person's.
            try db.execute(sql: """
                CREATE TABLE account (
                  id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, password_hash TEXT NOT NULL,
                  password_version INTEGER NOT NULL, created REAL NOT NULL);
                CREATE TABLE account_token (
                  id TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                  label TEXT NOT NULL, secret_hash TEXT NOT NULL, created REAL NOT NULL);
                CREATE INDEX account_token_by_user ON account_token (user_id);
                """)
        }
        migrator.registerMigration("accounts v2: sessions") { db in
            // A browser's session by the SHA-256 of its id; the value is hummingbird-auth's
            // session (the account and its password version), as JSON.
            try db.execute(sql: """
                CREATE TABLE account_session (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires REAL);
                CREATE INDEX account_session_by_expiry ON account_session (expires);
                """)
        }
        migrator.registerMigration("accounts v3: roles") { db in
            // Every account could change Sources.yml before roles: each becomes an admin,
            // and their names are kept for the one message that says so.
            try db.execute(sql: """
                ALTER TABLE account ADD COLUMN role TEXT NOT NULL DEFAULT 'admin';
                CREATE TABLE account_roles_upgrade (name TEXT NOT NULL);
                INSERT INTO account_roles_upgrade (name) SELECT name FROM account;
                """)
        }
        migrator.registerMigration("accounts v4: token use") { db in
            // When each token last signed a request in (`aggregate user tokens`).
            try db.execute(sql: "ALTER TABLE account_token ADD COLUMN last_used REAL")
        }
        SQLiteStateDirectory.dropsFirstSeenLog(&migrator)
        return SQLiteSchema(name: "accounts", migrator: migrator)
    }()

    var database: any DatabaseWriter {
        get throws { try directory.stateDatabase(Self.schema) }
    }

    /// An account row; nil when a column holds what no account has (a damaged state).
    static func account(_ row: Row) -> Account? {
        guard let id = row["id"] as Int?, let name = row["name"] as String?, let hash = row["password_hash"] as String?,
              let version = row["password_version"] as Int?, let created = row["created"] as Double?,
              let role = (row["role"] as String?).flatMap(AccountRole.init(rawValue:)) else { return nil }
        return Account(id: id, name: name, passwordHash: hash, passwordVersion: version, created: Date(timeIntervalSince1970: created), role: role)
    }

    static func token(_ row: Row) -> AccountToken {
        AccountToken(id: row["id"], user: row["user_id"], label: row["label"], created: Date(timeIntervalSince1970: row["created"]),
                     lastUsed: (row["last_used"] as Double?).map(Date.init(timeIntervalSince1970:)))
    }

    public func add(name: String, passwordHash: String, role: AccountRole?, at: Date) async throws -> Account {
        try await database.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE name = ?", arguments: [name]) != true else {
                throw AccountError.nameTaken(name)
            }
            let first = try Bool.fetchOne(db, sql: "SELECT 1 FROM account LIMIT 1") != true
            let role = role ?? (first ? .admin : .reader)
            try db.execute(sql: "INSERT INTO account (name, password_hash, password_version, created, role) VALUES (?, ?, 1, ?, ?)",
                           arguments: [name, passwordHash, at.timeIntervalSince1970, role.rawValue])
            return Account(id: Int(db.lastInsertedRowID), name: name, passwordHash: passwordHash, created: at, role: role)
        }
    }

    public func setRole(named name: String, role: AccountRole) async throws -> Bool {
        try await database.write { db in
            try db.execute(sql: "UPDATE account SET role = ? WHERE name = ?", arguments: [role.rawValue, name])
            return db.changesCount > 0
        }
    }

    public func takeRolesUpgrade() async throws -> [String] {
        try await database.write { db in
            let names = try String.fetchAll(db, sql: "SELECT name FROM account_roles_upgrade ORDER BY name")
            if !names.isEmpty { try db.execute(sql: "DELETE FROM account_roles_upgrade") }
            return names
        }
    }

    public func accounts() async throws -> [Account] {
        try await database.read { db in try Row.fetchAll(db, sql: "SELECT * FROM account ORDER BY name").compactMap(Self.account) }
    }

    public func account(named name: String) async throws -> Account? {
        try await database.read { db in try Row.fetchOne(db, sql: "SELECT * FROM account WHERE name = ?", arguments: [name]).flatMap(Self.account) }
    }

    public func account(id: Int) async throws -> Account? {
        try await database.read { db in try Row.fetchOne(db, sql: "SELECT * FROM account WHERE id = ?", arguments: [id]).flatMap(Self.account) }
    }

    public func remove(named name: String) async throws -> Bool {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM account_token WHERE user_id IN (SELECT id FROM account WHERE name = ?)", arguments: [name])
            try db.execute(sql: "DELETE FROM account WHERE name = ?", arguments: [name])
            return db.changesCount > 0
        }
    }

    public func setPassword(named name: String, hash: String) async throws -> Bool {
        try await database.write { db in
            try db.execute(sql: "UPDATE account SET password_hash = ?, password_version = password_version + 1 WHERE name = ?",
                           arguments: [hash, name])
            return db.changesCount > 0
        }
    }

    public func add(_ token: AccountToken, secretHash: String) async throws {
        try await database.write { db in
            try db.execute(sql: "INSERT INTO account_token (id, user_id, label, secret_hash, created) VALUES (?, ?, ?, ?, ?)",
                           arguments: [token.id, token.user, token.label, secretHash, token.created.timeIntervalSince1970])
        }
    }

    public func tokens(of user: Int) async throws -> [AccountToken] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM account_token WHERE user_id = ? ORDER BY created, id", arguments: [user]).map(Self.token)
        }
    }

    public func revoke(token id: String, of user: Int) async throws -> Bool {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM account_token WHERE id = ? AND user_id = ?", arguments: [id, user])
            return db.changesCount > 0
        }
    }

    public func markUsed(token id: String, at: Date) async throws {
        try await database.write { db in
            try db.execute(sql: "UPDATE account_token SET last_used = ? WHERE id = ? AND (last_used IS NULL OR last_used <= ?)",
                           arguments: [at.timeIntervalSince1970, id, at.timeIntervalSince1970 - AccountToken.useResolution])
        }
    }

    public func token(id: String) async throws -> (token: AccountToken, secretHash: String, account: Account)? {
        try await database.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM account_token WHERE id = ?", arguments: [id]),
                  let account = try Row.fetchOne(db, sql: "SELECT * FROM account WHERE id = ?", arguments: [row["user_id"] as Int]).flatMap(Self.account)
            else { return nil }
            return (Self.token(row), row["secret_hash"], account)
        }
    }

    public func keepSession(_ key: String, value: String, expires: Date?, replacing: Bool, now: Date) async throws -> Bool {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM account_session WHERE expires <= ?", arguments: [now.timeIntervalSince1970])
            if replacing {
                try db.execute(sql: """
                    INSERT INTO account_session (key, value, expires) VALUES (?, ?, ?)
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = coalesce(excluded.expires, account_session.expires)
                    """, arguments: [key, value, expires?.timeIntervalSince1970])
                return true
            }
            try db.execute(sql: "INSERT INTO account_session (key, value, expires) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING",
                           arguments: [key, value, expires?.timeIntervalSince1970])
            return db.changesCount > 0
        }
    }

    public func session(_ key: String, now: Date) async throws -> (value: String, expires: Date?)? {
        try await database.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT value, expires FROM account_session WHERE key = ? AND coalesce(expires > ?, 1)",
                                             arguments: [key, now.timeIntervalSince1970]) else { return nil }
            return (row["value"], (row["expires"] as Double?).map(Date.init(timeIntervalSince1970:)))
        }
    }

    public func endSession(_ key: String) async throws {
        try await database.write { db in try db.execute(sql: "DELETE FROM account_session WHERE key = ?", arguments: [key]) }
    }
}
