import FeedState
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import HummingbirdBasicAuth
import HummingbirdBcrypt
import Logging
import NIOCore
import NIOPosix

/// Who a request signed in as.
struct SignedIn: PasswordAuthenticatable {
    let account: Account
    var passwordHash: String? { account.passwordHash }
}

/// The accounts by name for hummingbird-auth's Basic authenticator. A name no account has
/// gets a stand-in whose hash is of a random password: it is checked all the same, so a
/// wrong user name costs what a wrong password costs, and never succeeds.
struct AccountPasswords: UserPasswordRepository {
    let store: any AccountStore
    let standInHash: String

    func getUser(named username: String, context: UserRepositoryContext) async throws -> SignedIn? {
        if let account = try await store.account(named: username) { return SignedIn(account: account) }
        return SignedIn(account: Account(id: -1, name: username, passwordHash: standInHash, created: .distantPast))
    }
}

/// Passwords: bcrypt at cost 12 (OWASP asks for 10 at least; 12 takes about a quarter of
/// a second here, on a thread pool, never on an event loop).
public enum Passwords {
    public static let cost: UInt8 = 12

    public static func hash(_ password: String) async throws -> String {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }
}

/// Signing in with a name and a password (the login form, Basic, ClientLogin) or a token,
/// throttled per address and user.
struct SignIn: Sendable {
    let access: AccountAccess
    let throttle = LoginThrottle()
    let passwords: AccountPasswords
    let verifier = BcryptPasswordVerifier()

    enum Refusal: Error {
        case wrong
        case throttled(retryAfter: Int)
        case unavailable
    }

    /// Hashes the stand-in password once, when `serve` starts (the cost of one sign-in).
    init(access: AccountAccess) {
        self.access = access
        let random = AccountToken.make(user: 0, label: "", at: Date()).text
        passwords = AccountPasswords(store: access.store, standInHash: Bcrypt.hash(random, cost: Passwords.cost))
    }

    /// The account of `name` and `password`, as every sign-in checks it.
    func check(name: String, password: String, address: String) async -> Result<Account, Refusal> {
        if let wait = await throttle.retryAfter(address: address, user: name) { return .failure(.throttled(retryAfter: wait)) }
        let found: SignedIn?
        do {
            found = try await passwords.getUser(named: name, context: UserRepositoryContext(logger: Logger(label: "aggregate-sign-in")))
        } catch {
            return .failure(.unavailable)
        }
        guard let found, let hash = found.passwordHash,
              (try? await verifier.verifyPassword(password, createsHash: hash)) == true, found.account.id > 0 else {
            await throttle.failed(address: address, user: name)
            return .failure(.wrong)
        }
        await throttle.succeeded(user: name)
        return .success(found.account)
    }

    /// The account of an API token's text (`agg_…`), or nil.
    func account(token text: String) async -> Account? {
        guard let (id, secret) = AccountToken.parse(text),
              let found = try? await access.store.token(id: id),
              AccountToken.secret(secret, matches: found.secretHash) else { return nil }
        return found.account
    }
}

/// Signs a request in when it carries credentials, after hummingbird-auth's session
/// authenticator: a token (`Authorization: Bearer`, `GoogleLogin auth=`, or `?token=`), a
/// trusted proxy's header, or Basic (hummingbird-auth's authenticator, throttled). Then lets
/// through only what needs no one: the login page, the reader's assets, `/healthz`,
/// ClientLogin and `/metrics` (which has its own rule).
struct AccountGate: RouterMiddleware {
    typealias Context = ServeRequestContext
    let signIn: SignIn
    let basic: BasicAuthenticator<ServeRequestContext, AccountPasswords, BcryptPasswordVerifier>
    let proxyHeader: HTTPField.Name?

    init(signIn: SignIn) {
        self.signIn = signIn
        basic = BasicAuthenticator(users: signIn.passwords, passwordHashVerifier: BcryptPasswordVerifier())
        proxyHeader = signIn.access.proxyHeader.flatMap { HTTPField.Name($0) }
    }

    static let publicPaths: Set<String> = ["/login", "/healthz", "/reader.css", "/reader.js", "/placeholder.svg", "/metrics",
                                          "/api/greader/accounts/ClientLogin"]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // What needs no one is answered as it is (`/metrics` by its own rule, ClientLogin
        // and the login form by the credentials they are sent).
        if Self.publicPaths.contains(request.uri.path) { return try await next(request, context) }
        var context = context
        if context.identity == nil, let token = Self.token(of: request) {
            guard let account = await signIn.account(token: token) else {
                return Self.unauthorized(request, "the token is not one of this server's (revoked, or mistyped)")
            }
            context.identity = SignedIn(account: account)
        }
        if context.identity == nil, let proxyHeader, let name = request.headers[proxyHeader],
           signIn.access.trustedProxies.contains(where: { $0.contains(context.clientAddress) }) {
            // A trusted proxy vouches for the name; from any other address the header means nothing.
            if let account = try? await signIn.access.store.account(named: name) { context.identity = SignedIn(account: account) }
        }
        if context.identity == nil, let credentials = request.headers.basic {
            if let wait = await signIn.throttle.retryAfter(address: context.clientAddress, user: credentials.username) {
                return Self.tooManyAttempts(wait)
            }
            if let found = try await basic.authenticate(request: request, context: context), found.account.id > 0 {
                await signIn.throttle.succeeded(user: credentials.username)
                context.identity = found
            } else {
                await signIn.throttle.failed(address: context.clientAddress, user: credentials.username)
                return Self.unauthorized(request, "wrong user name or password")
            }
        }
        if context.identity == nil {
            return Self.unauthorized(request, "sign in first: a session (/login), HTTP Basic, or a token (Authorization: Bearer, ?token=)")
        }
        return try await next(request, context)
    }

    /// A token the request carries: `Authorization: Bearer T`, `Authorization: GoogleLogin auth=T`, or `?token=T`.
    static func token(of request: Request) -> String? {
        if let bearer = request.headers.bearer { return bearer.token }
        if let authorization = request.headers[.authorization], authorization.hasPrefix("GoogleLogin auth=") {
            return String(authorization.dropFirst("GoogleLogin auth=".count))
        }
        return request.uri.queryParameters.get("token")
    }

    /// A page asks a browser to sign in; anything else is told how, with a Basic challenge.
    static func unauthorized(_ request: Request, _ detail: String) -> Response {
        if request.method == .get, FeedRoutes.wantsHTML(request), request.headers[.authorization] == nil {
            let next = request.uri.description
            return Response(status: .seeOther, headers: [.location: "/login?next=" + LoginPage.queryEscaped(next), .cacheControl: "no-store"])
        }
        var response = Problem(title: "Unauthorized", status: 401, detail: detail).response
        response.headers[.wwwAuthenticate] = #"Basic realm="aggregate", charset="UTF-8""#
        return response
    }

    static func tooManyAttempts(_ seconds: Int) -> Response {
        var response = Problem(title: "Too Many Requests", status: 429,
                               detail: "too many failed sign-ins from this address or for this user: try again in \(seconds) s").response
        response.headers[.retryAfter] = String(seconds)
        return response
    }
}

/// `--no-auth`: read-only. Anything but GET and HEAD is refused before a route sees it.
struct ReadOnlyGate: RouterMiddleware {
    typealias Context = ServeRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head else {
            return Problem(title: "Forbidden", status: 403,
                           detail: "this server runs with --no-auth and is read-only: nothing here changes state (add a user to sign in and read)").response
        }
        return try await next(request, context)
    }
}
