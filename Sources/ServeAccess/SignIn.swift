import ServeHTTP
import Crypto
import FeedState
import Foundation
import HummingbirdAuth
import HummingbirdBasicAuth
import HummingbirdBcrypt
import NIOPosix
import Synchronization

/// How a request signed in: cookie-backed ones change state only with the form's token.
package enum Credential: Sendable {
    /// Nobody signed in, on a server without accounts: this machine's owner (or, with
    /// `--no-auth`, a guest who only reads).
    case owner, guest
    /// A browser's session cookie.
    case session
    /// An API token (`Authorization: Bearer`, `GoogleLogin auth=`, `?token=`).
    case token
    /// HTTP Basic.
    case basic
    /// A trusted reverse proxy's header.
    case proxy
}

/// Who a request signed in as, and what they may do (hummingbird-auth's identity, with
/// the roles its `RolePolicy` checks).
package struct SignedIn: PasswordAuthenticatable, RoleProviding {
    /// Nil for the owner or a guest of a server without accounts.
    package let account: Account?
    package let credential: Credential

    package init(account: Account, credential: Credential) {
        self.account = account
        self.credential = credential
    }

    private init(credential: Credential) {
        account = nil
        self.credential = credential
    }

    /// Everyone, on a server without accounts on this machine.
    package static let owner = SignedIn(credential: .owner)
    /// Anyone, on a `--no-auth` server: reads only.
    package static let guest = SignedIn(credential: .guest)

    package var passwordHash: String? { account?.passwordHash }

    /// An admin reads too.
    package var roles: Set<AccountRole> {
        switch (account?.role, credential) {
        case (.admin?, _), (nil, .owner): [.admin, .reader]
        default: [.reader]
        }
    }

    /// Whose marks: the account's, else the default person's.
    package var person: Int { account?.id ?? StoreUser.default }
}

/// The accounts by name for hummingbird-auth's Basic authenticator. A name no account has
/// gets a stand-in whose hash is of a random password: it is checked all the same, so a
/// wrong user name costs what a wrong password costs, and never succeeds.
package struct AccountPasswords: UserPasswordRepository {
    package let store: any AccountStore
    package let standInHash: String

    package func getUser(named username: String, context: UserRepositoryContext) async throws -> SignedIn? {
        if let account = try await store.account(named: username) { return SignedIn(account: account, credential: .basic) }
        return SignedIn(account: Account(id: -1, name: username, passwordHash: standInHash, created: .distantPast), credential: .basic)
    }

    package init(store: any AccountStore, standInHash: String) {
        self.store = store
        self.standInHash = standInHash
    }
}

/// Passwords: bcrypt at cost 12 (OWASP asks for 10 at least; 12 takes about a quarter of
/// a second here, on a thread pool, never on an event loop).
public enum Passwords {
    public static let cost: UInt8 = 12

    public static func hash(_ password: String) async throws -> String {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether `password` is the one `hash` was made of.
    public static func matches(_ password: String, hash: String) async -> Bool {
        (try? await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }) ?? false
    }
}

/// Signing in with a name and a password (the login form, Basic, ClientLogin) or a
/// token. Every password check goes through ``SignInLimits``; a right Basic credential
/// is remembered for a few minutes (``RememberedCredentials``), so a feed reader polling
/// with Basic costs one bcrypt check, not one a request.
package struct SignIn: Sendable {
    package let access: AccountAccess
    package let limits = SignInLimits()
    package let remembered = RememberedCredentials()
    package let passwords: AccountPasswords
    package let verifier = BcryptPasswordVerifier()

    package enum Refusal: Error {
        case wrong
        /// Too many failures for this person from this address, or from this address.
        case throttled(retryAfter: Int)
        /// Password checks are running at their limit: try again in a moment.
        case busy
        case unavailable
    }

    /// Hashes the stand-in password once, when `serve` starts (the cost of one sign-in).
    package init(access: AccountAccess) {
        self.access = access
        let random = AccountToken.make(user: 0, label: "", at: Date()).text
        passwords = AccountPasswords(store: access.store, standInHash: Bcrypt.hash(random, cost: Passwords.cost))
    }

    /// The account of `name` and `password`, as every sign-in checks it, from `address`.
    package func check(name: String, password: String, address: String) async -> Result<Account, Refusal> {
        if let remembered = await rememberedAccount(name: name, password: password) { return .success(remembered) }
        let slowdown = await limits.slowdown(person: name)
        if slowdown > .zero { try? await Task.sleep(for: slowdown) }
        let ticket: SignInLimits.Ticket
        switch await limits.admit(person: name, address: address) {
        case .check(let admitted): ticket = admitted
        case .refused(let seconds): return .failure(.throttled(retryAfter: seconds))
        case .busy: return .failure(.busy)
        }
        let found: SignedIn?
        do {
            found = try await passwords.getUser(named: name, context: UserRepositoryContext(logger: .init(label: "aggregate-sign-in")))
        } catch {
            await limits.finish(ticket, .undecided)
            return .failure(.unavailable)
        }
        guard let found, let account = found.account, let hash = found.passwordHash,
              (try? await verifier.verifyPassword(password, createsHash: hash)) == true, account.id > 0 else {
            await limits.finish(ticket, .failed)
            return .failure(.wrong)
        }
        await limits.finish(ticket, .succeeded)
        remembered.remember(name: name, password: password, account: account)
        return .success(account)
    }

    /// The account a right credential was lately remembered for, while its password is
    /// the one it was remembered under.
    private func rememberedAccount(name: String, password: String) async -> Account? {
        guard let (id, version) = remembered.account(name: name, password: password),
              let account = try? await access.store.account(id: id), account.passwordVersion == version, account.name == name else { return nil }
        return account
    }

    /// The account of an API token's text (`agg_…`), or nil.
    package func account(token text: String, now: Date = Date()) async -> Account? {
        guard let (id, secret) = AccountToken.parse(text) else { return nil }
        return await account(tokenID: id, secret: secret, now: now)
    }

    /// The account whose token `id` has `secret` (with `label`, when given), noting its use.
    private func account(tokenID id: String, secret: String, label: String? = nil, now: Date) async -> Account? {
        guard let found = try? await access.store.token(id: id), label.map({ found.token.label == $0 }) ?? true,
              AccountToken.secret(secret, matches: found.secretHash) else { return nil }
        // Its last use, to the minute: the store is written only when that moves.
        if found.token.lastUsed.map({ now.timeIntervalSince($0) >= AccountToken.useResolution }) ?? true {
            try? await access.store.markUsed(token: id, at: now)
        }
        return found.account
    }

    /// The account of a Fever `api_key` (``AccountToken/feverKey(name:password:)``), from
    /// `address`. A key is looked up, not checked as a password, so no slot is held; a
    /// wrong one counts as a failed sign-in of the person `fever` from the address, and
    /// ``SignInLimits`` refuses an address that keeps guessing.
    package func account(feverKey key: String, address: String, now: Date = Date()) async -> Result<Account, Refusal> {
        if let wait = await limits.refusal(person: Self.feverPerson, address: address, now: now) { return .failure(.throttled(retryAfter: wait)) }
        let key = key.lowercased()
        guard let account = await account(tokenID: AccountToken.feverID(key: key), secret: key, label: AccountToken.feverLabel, now: now) else {
            await limits.failed(person: Self.feverPerson, address: address, now: now)
            return .failure(.wrong)
        }
        return .success(account)
    }

    /// Whom the sign-in limits count Fever's keys against: the key names nobody.
    static let feverPerson = "(fever)"
}

/// Right name-and-password pairs of the last few minutes, by a keyed hash of the pair
/// (HMAC-SHA-256 under a key that never leaves the process): a memory dump shows no
/// password, and a pair is remembered only while its account's password is unchanged.
package final class RememberedCredentials: Sendable {
    package static let lifetime: TimeInterval = 5 * 60
    package static let most = 10_000
    private let key = SymmetricKey(size: .bits256)
    private let entries = Mutex<[Data: (account: Int, passwordVersion: Int, expires: Date)]>([:])

    private func digest(_ name: String, _ password: String) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data((name + "\u{0}" + password).utf8), using: key))
    }

    package func account(name: String, password: String, now: Date = Date()) -> (id: Int, passwordVersion: Int)? {
        let digest = digest(name, password)
        return entries.withLock { entries in
            guard let entry = entries[digest], entry.expires > now else { return nil }
            return (entry.account, entry.passwordVersion)
        }
    }

    package func remember(name: String, password: String, account: Account, now: Date = Date()) {
        let digest = digest(name, password)
        entries.withLock { entries in
            if entries.count >= Self.most { entries = entries.filter { $0.value.expires > now } }
            if entries.count >= Self.most { entries.removeAll() }
            entries[digest] = (account.id, account.passwordVersion, now.addingTimeInterval(Self.lifetime))
        }
    }

    package init() {}
}
