import Crypto
import Foundation

/// A person who can sign in to `serve`: `aggregate user add NAME`. Their marks are kept in
/// the card store under ``id`` (``CardStore/reading(as:)``).
public struct Account: Sendable, Equatable {
    /// From 1, never reused: the default person (no account) is ``StoreUser/default``.
    public var id: Int
    public var name: String
    /// The password under bcrypt (salted, slow); the password itself is never kept.
    public var passwordHash: String
    /// Moved by every password change: a session remembers the one it was made under, and
    /// ends when it moved.
    public var passwordVersion: Int
    public var created: Date
    /// What the account may do in `serve`: read and mark (every account), or also change
    /// the shared Sources.yml and see the server's operations (admins).
    public var role: AccountRole

    public init(id: Int, name: String, passwordHash: String, passwordVersion: Int = 1, created: Date, role: AccountRole = .reader) {
        self.id = id
        self.name = name
        self.passwordHash = passwordHash
        self.passwordVersion = passwordVersion
        self.created = created
        self.role = role
    }

    /// Why `name` cannot name an account, or nil: 1 to 64 letters, digits, `.`, `_`, `-`
    /// or `@`, so that it goes into a Basic credential, a proxy header and a log line as it is.
    public static func problem(withName name: String) -> String? {
        guard (1...64).contains(name.count),
              name.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-@".unicodeScalars.contains($0)) })
        else { return "a user name is 1 to 64 letters, digits, '.', '_', '-' or '@', got \(String(reflecting: name))" }
        return nil
    }
}

/// What an account may do. Every account reads, searches and marks its own cards; an admin
/// also changes the shared Sources.yml through `serve` (subscribing, unsubscribing,
/// renaming) and sees `/metrics` and the detailed `/healthz` from other machines.
public enum AccountRole: String, Sendable, CaseIterable, Codable {
    case admin
    case reader
}

/// An API token of an account, for scripts and feed readers (`Authorization: Bearer`,
/// `?token=`). Its secret is shown once, when made, and kept only as a SHA-256 hash: a
/// token is 256 random bits, which a fast hash keeps as safe as a slow one keeps a password.
public struct AccountToken: Sendable, Equatable {
    /// Public: names the token in `aggregate user tokens` and `revoke`.
    public var id: String
    public var user: Int
    public var label: String
    public var created: Date
    /// When it last signed a request in (to the minute: ``AccountStore/markUsed(token:at:)``);
    /// nil when never.
    public var lastUsed: Date?

    public init(id: String, user: Int, label: String, created: Date, lastUsed: Date? = nil) {
        self.id = id
        self.user = user
        self.label = label
        self.created = created
        self.lastUsed = lastUsed
    }

    /// How finely a token's last use is kept: a use within this of the last noted one is
    /// not written.
    public static let useResolution: TimeInterval = 60

    /// A new token of `user`: the token, the text to show once (`agg_<id>_<secret>`), and
    /// the hash to keep.
    public static func make(user: Int, label: String, at: Date) -> (token: AccountToken, text: String, secretHash: String) {
        let id = randomHex(bytes: 4), secret = randomHex(bytes: 32)
        return (AccountToken(id: id, user: user, label: label, created: at), "agg_\(id)_\(secret)", hash(secret: secret))
    }

    /// The id and secret of a token's text, or nil when it is not one.
    public static func parse(_ text: String) -> (id: String, secret: String)? {
        let parts = text.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "agg", parts[1].utf8.count == 8, parts[2].utf8.count == 64,
              (parts[1] + parts[2]).utf8.allSatisfy({ isHexDigit($0) }) else { return nil }
        return (String(parts[1]), String(parts[2]))
    }

    public static func hash(secret: String) -> String {
        Hex.lowercase(SHA256.hash(data: Data(secret.utf8)))
    }

    /// Whether `secret` is the one `secretHash` was made of, compared in constant time.
    public static func secret(_ secret: String, matches secretHash: String) -> Bool {
        ConstantTime.equal(hash(secret: secret), secretHash)
    }

    static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.lowercase((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

/// A person's Fever password, kept as one of their tokens. Fever's apps send
/// `api_key`, the MD5 of `name:password`, with every request and name no token, so the
/// token's id is made from the key and its secret is the key; only a SHA-256 of the key is
/// kept. The password is Fever's own (`aggregate user fever NAME`), never the account's:
/// an MD5 sent on every request protects it far less than bcrypt and a session.
extension AccountToken {
    /// The label of a Fever password among a person's tokens.
    public static let feverLabel = "Fever API"

    /// Fever's `api_key` for `name` and `password`: MD5 of `name:password` in lowercase hex.
    public static func feverKey(name: String, password: String) -> String {
        Hex.lowercase(Insecure.MD5.hash(data: Data("\(name):\(password)".utf8)))
    }

    /// The id of the token a Fever key is kept as (8 hex digits, as every token's).
    public static func feverID(key: String) -> String {
        String(hash(secret: "fever:" + key.lowercased()).prefix(8))
    }

    /// The token that keeps `user`'s Fever `key`, and the hash to keep.
    public static func fever(user: Int, key: String, at: Date) -> (token: AccountToken, secretHash: String) {
        (AccountToken(id: feverID(key: key), user: user, label: feverLabel, created: at), hash(secret: key.lowercased()))
    }
}

/// Comparisons whose time does not depend on where two secrets differ.
public enum ConstantTime {
    public static func equal(_ a: String, _ b: String) -> Bool {
        let a = Array(a.utf8), b = Array(b.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// Why an account could not be changed, in words for the person at the command line.
public enum AccountError: Error, Sendable, Equatable, CustomStringConvertible {
    case nameTaken(String)
    case noSuchUser(String)

    public var description: String {
        switch self {
        case .nameTaken(let name): "a user named \(name) exists already (change the password with `aggregate user password \(name)`)"
        case .noSuchUser(let name): "no user is named \(name) (`aggregate user list` lists them)"
        }
    }
}

/// The accounts and their API tokens. Implementations: ``InMemoryAccounts`` (tests),
/// SQLite in `state.sqlite`, PostgreSQL on a shared state.
public protocol AccountStore: Sendable {
    /// Adds an account with `role`, or when nil an admin if it is the first account and a
    /// reader otherwise (decided in the same transaction as the insert); throws
    /// ``AccountError/nameTaken(_:)``.
    func add(name: String, passwordHash: String, role: AccountRole?, at: Date) async throws -> Account
    /// Gives the account `role`; false when there is no account of that name.
    func setRole(named name: String, role: AccountRole) async throws -> Bool
    /// The names of the accounts an upgrade to roles made admins (they could change
    /// Sources.yml before roles existed), once: the list is emptied as it is read.
    func takeRolesUpgrade() async throws -> [String]
    /// Every account, by name.
    func accounts() async throws -> [Account]
    func account(named name: String) async throws -> Account?
    func account(id: Int) async throws -> Account?
    /// Removes the account and its tokens; false when there is none of that name.
    func remove(named name: String) async throws -> Bool
    /// Sets the password's hash and moves ``Account/passwordVersion`` (ending every
    /// session); false when there is no account of that name.
    func setPassword(named name: String, hash: String) async throws -> Bool
    /// Keeps `token` with the hash of its secret.
    func add(_ token: AccountToken, secretHash: String) async throws
    /// The account's tokens, oldest first.
    func tokens(of user: Int) async throws -> [AccountToken]
    /// Removes the account's token `id`; false when it has none such.
    func revoke(token id: String, of user: Int) async throws -> Bool
    /// The token `id`, the hash of its secret, and its account.
    func token(id: String) async throws -> (token: AccountToken, secretHash: String, account: Account)?
    /// Notes that the token `id` signed a request in `at`, unless it was noted less than
    /// ``AccountToken/useResolution`` before (a token used every second writes once a minute).
    func markUsed(token id: String, at: Date) async throws
    /// Keeps a signed-in browser's session, `value` (JSON), under `key` (a hash of the
    /// session's id: the id itself is a secret and is never stored) until `expires`; nil
    /// keeps the expiry it had. With `replacing: false` an existing one stays and this
    /// answers false. Expired sessions are dropped on the way.
    func keepSession(_ key: String, value: String, expires: Date?, replacing: Bool, now: Date) async throws -> Bool
    /// The session kept under `key`, unless it expired by `now`.
    func session(_ key: String, now: Date) async throws -> (value: String, expires: Date?)?
    /// Ends the session kept under `key`.
    func endSession(_ key: String) async throws
}

extension AccountStore {
    /// Adds an account: the first is an admin, any later one a reader.
    public func add(name: String, passwordHash: String, at: Date) async throws -> Account {
        try await add(name: name, passwordHash: passwordHash, role: nil, at: at)
    }
}

/// Accounts in memory: for tests, and a state that keeps nothing.
public actor InMemoryAccounts: AccountStore {
    private var byID: [Int: Account] = [:]
    private var tokens: [String: (token: AccountToken, secretHash: String)] = [:]
    private var sessions: [String: (value: String, expires: Date?)] = [:]
    private var nextID = 1

    public init() {}

    public func add(name: String, passwordHash: String, role: AccountRole?, at: Date) throws -> Account {
        guard !byID.values.contains(where: { $0.name == name }) else { throw AccountError.nameTaken(name) }
        let account = Account(id: nextID, name: name, passwordHash: passwordHash, created: at, role: role ?? (byID.isEmpty ? .admin : .reader))
        nextID += 1
        byID[account.id] = account
        return account
    }

    public func accounts() -> [Account] { byID.values.sorted { $0.name < $1.name } }
    public func account(named name: String) -> Account? { byID.values.first { $0.name == name } }
    public func account(id: Int) -> Account? { byID[id] }

    public func remove(named name: String) -> Bool {
        guard let account = account(named: name) else { return false }
        byID[account.id] = nil
        tokens = tokens.filter { $0.value.token.user != account.id }
        return true
    }

    public func setPassword(named name: String, hash: String) -> Bool {
        guard var account = account(named: name) else { return false }
        account.passwordHash = hash
        account.passwordVersion += 1
        byID[account.id] = account
        return true
    }

    public func setRole(named name: String, role: AccountRole) -> Bool {
        guard var account = account(named: name) else { return false }
        account.role = role
        byID[account.id] = account
        return true
    }

    /// Nothing to upgrade: accounts in memory were made with roles.
    public func takeRolesUpgrade() -> [String] { [] }

    public func add(_ token: AccountToken, secretHash: String) { tokens[token.id] = (token, secretHash) }

    public func tokens(of user: Int) -> [AccountToken] {
        tokens.values.map(\.token).filter { $0.user == user }.sorted { ($0.created, $0.id) < ($1.created, $1.id) }
    }

    public func revoke(token id: String, of user: Int) -> Bool {
        guard tokens[id]?.token.user == user else { return false }
        tokens[id] = nil
        return true
    }

    public func token(id: String) -> (token: AccountToken, secretHash: String, account: Account)? {
        guard let kept = tokens[id], let account = byID[kept.token.user] else { return nil }
        return (kept.token, kept.secretHash, account)
    }

    public func markUsed(token id: String, at: Date) {
        guard let kept = tokens[id], kept.token.lastUsed.map({ at.timeIntervalSince($0) >= AccountToken.useResolution }) ?? true else { return }
        tokens[id]?.token.lastUsed = at
    }

    public func keepSession(_ key: String, value: String, expires: Date?, replacing: Bool, now: Date) -> Bool {
        sessions = sessions.filter { ($0.value.expires ?? .distantFuture) > now }
        if let kept = sessions[key] {
            guard replacing else { return false }
            sessions[key] = (value, expires ?? kept.expires)
        } else {
            sessions[key] = (value, expires)
        }
        return true
    }

    public func session(_ key: String, now: Date) -> (value: String, expires: Date?)? {
        guard let kept = sessions[key], (kept.expires ?? .distantFuture) > now else { return nil }
        return kept
    }

    public func endSession(_ key: String) { sessions[key] = nil }
}
