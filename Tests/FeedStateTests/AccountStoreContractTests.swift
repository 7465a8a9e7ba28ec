import FeedState
import Foundation
import Testing

/// Accounts and tokens keep the same promises in memory, in SQLite and in PostgreSQL.
extension StoreContractTests {
    @Test(arguments: Backend.all) func accountsAreAddedChangedAndRemovedWithTheirTokens(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let accounts = state.accounts
            #expect(try await accounts.accounts().isEmpty)
            let ann = try await accounts.add(name: "ann", passwordHash: "$2b$12$first", at: t1)
            let bob = try await accounts.add(name: "bob", passwordHash: "$2b$12$bob", at: t2)
            #expect(ann == Account(id: 1, name: "ann", passwordHash: "$2b$12$first", passwordVersion: 1, created: t1, role: .admin))
            #expect(bob.id == 2)
            await #expect(throws: AccountError.nameTaken("ann")) { try await accounts.add(name: "ann", passwordHash: "x", at: t2) }
            #expect(try await accounts.accounts().map(\.name) == ["ann", "bob"])
            #expect(try await accounts.account(named: "bob") == bob)
            #expect(try await accounts.account(id: 1) == ann)
            #expect(try await accounts.account(named: "carol") == nil)

            // A new password moves the version every session remembers.
            #expect(try await accounts.setPassword(named: "ann", hash: "$2b$12$second"))
            #expect(try await accounts.account(id: 1)?.passwordVersion == 2)
            #expect(try await accounts.account(id: 1)?.passwordHash == "$2b$12$second")
            #expect(try await !accounts.setPassword(named: "carol", hash: "x"))

            let made = AccountToken.make(user: ann.id, label: "phone", at: t1)
            try await accounts.add(made.token, secretHash: made.secretHash)
            let other = AccountToken.make(user: bob.id, label: "cron", at: t2)
            try await accounts.add(other.token, secretHash: other.secretHash)
            let parsed = try #require(AccountToken.parse(made.text))
            #expect(parsed.id == made.token.id)
            let found = try #require(try await accounts.token(id: parsed.id))
            #expect(found.token == made.token)
            #expect(found.account.name == "ann")
            #expect(AccountToken.secret(parsed.secret, matches: found.secretHash))
            #expect(!AccountToken.secret(String(parsed.secret.reversed()), matches: found.secretHash))
            // Its last use, to the minute: a use within a minute of the last noted one is not written.
            #expect(found.token.lastUsed == nil)
            try await accounts.markUsed(token: made.token.id, at: t2)
            try await accounts.markUsed(token: made.token.id, at: t2.addingTimeInterval(59))
            #expect(try await accounts.token(id: made.token.id)?.token.lastUsed == t2)
            try await accounts.markUsed(token: made.token.id, at: t2.addingTimeInterval(60))
            #expect(try await accounts.tokens(of: ann.id).map(\.lastUsed) == [t2.addingTimeInterval(60)])
            #expect(try await accounts.tokens(of: bob.id).map(\.lastUsed) == [nil])
            try await accounts.markUsed(token: "00000000", at: t2)
            var used = made.token
            used.lastUsed = t2.addingTimeInterval(60)
            #expect(try await accounts.tokens(of: ann.id) == [used])

            // Only its own account revokes a token.
            #expect(try await !accounts.revoke(token: made.token.id, of: bob.id))
            #expect(try await accounts.revoke(token: made.token.id, of: ann.id))
            #expect(try await accounts.token(id: made.token.id) == nil)

            // Removing an account takes its tokens; its id is not given again.
            #expect(try await accounts.remove(named: "bob"))
            #expect(try await !accounts.remove(named: "bob"))
            #expect(try await accounts.token(id: other.token.id) == nil)
            #expect(try await accounts.add(name: "carol", passwordHash: "x", at: t2).id > bob.id)
        }
    }

    /// Roles: the first account is an admin, later ones readers unless said otherwise,
    /// and a role is changed by name; a store made with roles has no upgrade to tell.
    @Test(arguments: Backend.all) func theFirstAccountIsAnAdminAndRolesChange(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let accounts = state.accounts
            let ann = try await accounts.add(name: "ann", passwordHash: "x", at: t1)
            let bob = try await accounts.add(name: "bob", passwordHash: "x", at: t1)
            let cat = try await accounts.add(name: "cat", passwordHash: "x", role: .admin, at: t1)
            #expect([ann.role, bob.role, cat.role] == [.admin, .reader, .admin])
            let roles = try await accounts.accounts().map(\.role)
            #expect(roles == [.admin, .reader, .admin])
            let changed = [try await accounts.setRole(named: "bob", role: .admin), try await accounts.setRole(named: "ann", role: .reader),
                           try await accounts.setRole(named: "dan", role: .admin)]
            #expect(changed == [true, true, false])
            let bobNow = try await accounts.account(named: "bob"), annNow = try await accounts.account(id: 1)
            #expect(bobNow?.role == .admin && annNow?.role == .reader)
            let upgraded = try await accounts.takeRolesUpgrade()
            #expect(upgraded == [])
        }
    }

    /// Browsers' sessions: kept until they expire, created once, replaced keeping their
    /// expiry when none is given, ended.
    @Test(arguments: Backend.all) func sessionsAreKeptUntilTheyExpire(_ backend: Backend) async throws {
        try await withState(backend) { state in
            let accounts = state.accounts
            let soon = t1.addingTimeInterval(60)
            #expect(try await accounts.keepSession("k1", value: #"{"user":1}"#, expires: soon, replacing: false, now: t1))
            #expect(try await !accounts.keepSession("k1", value: #"{"user":2}"#, expires: soon, replacing: false, now: t1))
            #expect(try await accounts.session("k1", now: t1)?.value == #"{"user":1}"#)
            #expect(try await accounts.session("k1", now: t1)?.expires == soon)
            // Replaced without an expiry: the one it had stays.
            #expect(try await accounts.keepSession("k1", value: #"{"user":3}"#, expires: nil, replacing: true, now: t1))
            #expect(try await accounts.session("k1", now: t1)?.value == #"{"user":3}"#)
            #expect(try await accounts.session("k1", now: t1)?.expires == soon)
            #expect(try await accounts.session("k1", now: soon) == nil)
            #expect(try await accounts.session("k2", now: t1) == nil)
            // No expiry: kept until ended.
            #expect(try await accounts.keepSession("k2", value: "{}", expires: nil, replacing: true, now: t1))
            #expect(try await accounts.session("k2", now: t1.addingTimeInterval(1e9))?.value == "{}")
            try await accounts.endSession("k2")
            #expect(try await accounts.session("k2", now: t1) == nil)
            // An expired session is gone once another is written, and its key can be used again.
            #expect(try await accounts.keepSession("k3", value: "{}", expires: nil, replacing: false, now: soon))
            #expect(try await accounts.keepSession("k1", value: "{}", expires: nil, replacing: false, now: soon))
        }
    }

    @Test func tokenTextIsCheckedBeforeAnyLookup() {
        let made = AccountToken.make(user: 1, label: "", at: Date())
        #expect(made.text.hasPrefix("agg_\(made.token.id)_"))
        #expect(made.text.utf8.count == 4 + 8 + 1 + 64)
        for text in ["", "agg_", "agg_1234567_" + String(repeating: "a", count: 64), "agg_12345678_" + String(repeating: "A", count: 64),
                     "xyz_12345678_" + String(repeating: "a", count: 64), made.text + "_"] {
            #expect(AccountToken.parse(text) == nil, "\(text)")
        }
        #expect(Account.problem(withName: "ann.o-k_1@home") == nil)
        #expect(Account.problem(withName: "ann:pw") == #"a user name is 1 to 64 letters, digits, '.', '_', '-' or '@', got "ann:pw""#)
        #expect(Account.problem(withName: "") != nil)
        #expect(Account.problem(withName: "é") != nil)
    }
}
