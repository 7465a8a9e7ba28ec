import FeedState
import FeedStateSQLite
import Foundation
import GRDB
import Testing

/// Accounts made before roles (issue 59): every one becomes an admin, since each could
/// change Sources.yml, and their names are told once.
@Suite struct AccountRolesMigrationTests {
    @Test func accountsMadeBeforeRolesBecomeAdminsAndAreToldOnce() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        // The accounts' schema as it was (v1 and v2), with two accounts.
        let old = try DatabaseQueue(path: directory.appendingPathComponent("state.sqlite").path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("accounts v1") { db in
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
            try db.execute(sql: """
                CREATE TABLE account_session (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires REAL);
                CREATE INDEX account_session_by_expiry ON account_session (expires);
                """)
        }
        try migrator.migrate(old)
        try await old.write { db in
            try db.execute(sql: "INSERT INTO account (name, password_hash, password_version, created) VALUES ('bob', 'x', 1, 0), ('ann', 'y', 1, 0)")
        }
        try old.close()

        let accounts = SQLiteAccounts(try SQLiteStateDirectory(directory: directory))
        #expect(try await accounts.accounts().map { "\($0.name) \($0.role)" } == ["ann admin", "bob admin"])
        #expect(try await accounts.takeRolesUpgrade() == ["ann", "bob"])
        #expect(try await accounts.takeRolesUpgrade() == [], "told once")
        #expect(try await accounts.add(name: "cat", passwordHash: "z", at: Date()).role == .reader, "not the first account")
    }
}
