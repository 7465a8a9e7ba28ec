import ServeHTTP
import FeedState
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth

/// The one authenticator chain: who a request is, from the credentials it carries, after
/// hummingbird-auth's session authenticator where a group takes sessions. In order: a
/// token (`Authorization: Bearer`, `GoogleLogin auth=`, `?token=`), a trusted proxy's
/// header, HTTP Basic (through ``SignIn``'s limits), and else the owner or guest of a
/// server without accounts (``OwnerAccess``). It never refuses a request for carrying no
/// credentials (the group's `IsAuthenticatedMiddleware` does); a credential that is
/// wrong is answered at once, so a client learns its token or password is wrong.
package struct Authenticate: RouterMiddleware {
    package typealias Context = ServeRequestContext
    /// Nil without accounts.
    package let signIn: SignIn?
    package let owner: OwnerAccess
    package let proxyHeader: HTTPField.Name?
    /// `--metrics-token`, on the operations' routes: a scraper's token, not an account's.
    package let metricsToken: String?

    package init(signIn: SignIn?, owner: OwnerAccess, metricsToken: String? = nil) {
        self.signIn = signIn
        self.owner = owner
        self.metricsToken = metricsToken
        proxyHeader = signIn?.access.proxyHeader.flatMap { HTTPField.Name($0) }
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        // While no account exists (a server started open), credentials mean nothing: a
        // feed reader set up with a password is served as before, as the owner.
        if context.identity == nil, let signIn, !owner.isOpen {
            if let token = Self.token(of: request), !(metricsToken.map { ConstantTime.equal(token, $0) } ?? false) {
                guard let account = await signIn.account(token: token) else {
                    return SignInAnswer.unauthorized(request, "the token is not one of this server's (revoked, or mistyped)")
                }
                context.identity = SignedIn(account: account, credential: .token)
            } else if let proxyHeader, context.client.viaTrustedProxy, let name = request.headers[proxyHeader] {
                // A trusted proxy vouches for the name; from any other peer the header means nothing.
                if let account = try? await signIn.access.store.account(named: name) {
                    context.identity = SignedIn(account: account, credential: .proxy)
                }
            } else if let credentials = request.headers.basic {
                switch await signIn.check(name: credentials.username, password: credentials.password, address: context.clientAddress) {
                case .success(let account): context.identity = SignedIn(account: account, credential: .basic)
                case .failure(.throttled(let seconds)): return SignInAnswer.tooManyAttempts(seconds)
                case .failure(.busy): return SignInAnswer.busy()
                case .failure(.wrong): return SignInAnswer.unauthorized(request, "wrong user name or password")
                case .failure(.unavailable):
                    return Problem(title: "Service Unavailable", status: 503, detail: "the accounts cannot be read now: try again shortly").response
                }
            }
        }
        if context.identity == nil { context.identity = owner.anonymous }
        return try await next(request, context)
    }

    /// A token the request carries: `Authorization: Bearer T`, `Authorization: GoogleLogin auth=T`, or `?token=T`.
    package static func token(of request: Request) -> String? {
        if let bearer = request.headers.bearer { return bearer.token }
        if let authorization = request.headers[.authorization], authorization.hasPrefix("GoogleLogin auth=") {
            return String(authorization.dropFirst("GoogleLogin auth=".count))
        }
        return request.uri.queryParameters.get("token")
    }
}

/// Turns hummingbird-auth's bare 401 (no identity, from `IsAuthenticatedMiddleware` or a
/// policy) into how this server asks: a browser is sent to the sign-in form, anything
/// else is told how, with a Basic challenge. Outermost in every group that needs someone.
package struct SignInChallenge<Context: RequestContext>: RouterMiddleware {
    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .unauthorized {
            return SignInAnswer.unauthorized(request, "sign in first: a session (/login), HTTP Basic, or a token (Authorization: Bearer, ?token=)")
        }
    }

    package init() {}
}

/// The answers of a sign-in that did not succeed.
package enum SignInAnswer {
    /// A page asks a browser to sign in; anything else is told how, with a Basic challenge.
    package static func unauthorized(_ request: Request, _ detail: String) -> Response {
        if request.method == .get, Form.wantsHTML(request), request.headers[.authorization] == nil {
            let next = request.uri.description
            return Response(status: .seeOther, headers: [.location: "/login?next=" + LoginPage.queryEscaped(next), .cacheControl: "no-store"])
        }
        var response = Problem(title: "Unauthorized", status: 401, detail: detail).response
        response.headers[.wwwAuthenticate] = #"Basic realm="aggregate", charset="UTF-8""#
        return response
    }

    package static func tooManyAttempts(_ seconds: Int) -> Response {
        var response = Problem(title: "Too Many Requests", status: 429,
                               detail: "too many failed sign-ins for this user from this address: try again in \(seconds) s").response
        response.headers[.retryAfter] = String(seconds)
        return response
    }

    package static func busy() -> Response {
        var response = Problem(title: "Too Many Requests", status: 429, detail: "too many sign-ins at once: try again in a second").response
        response.headers[.retryAfter] = "1"
        return response
    }
}

/// What a signed-in person is refused when their role does not allow a route.
package struct RoleRefusal: HTTPResponseError {
    package let detail: String
    package var status: HTTPResponse.Status { .forbidden }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        Problem(title: "Forbidden", status: 403, detail: detail).response
    }

    package static let admin = RoleRefusal(detail: "only an admin may do this (`aggregate user role NAME admin` makes one)")
    /// A role every signed-in person holds: refused only to one this server does not know.
    package static let reader = RoleRefusal(detail: "sign in as a person of this server (`aggregate user list`)")
    package static let writes = RoleRefusal(detail: "this server runs with --no-auth and is read-only: nothing here changes state (add a user to sign in and read)")

    package init(detail: String) {
        self.detail = detail
    }
}

/// `/metrics` and the detailed `/healthz` are the operator's: this machine, an admin, or
/// a client with the `--metrics-token`. The operations group's middleware decides it once
/// and says so in the context; `/metrics` is refused otherwise, `/healthz` answers its
/// summary.
package struct OperationsAccess: RouterMiddleware {
    package typealias Context = ServeRequestContext
    package let metricsToken: String?

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.seesOperations = context.isLocal || context.isAdmin
            || (metricsToken.map { ConstantTime.equal(Authenticate.token(of: request) ?? "", $0) } ?? false)
        return try await next(request, context)
    }

    package init(metricsToken: String?) {
        self.metricsToken = metricsToken
    }
}

/// Refuses a route of the operations group to whoever ``OperationsAccess`` did not admit.
package struct RequireOperations: RouterMiddleware {
    package typealias Context = ServeRequestContext

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard context.seesOperations else {
            return Problem(title: "Forbidden", status: 403,
                           detail: "\(request.uri.path) answers this machine, an admin, or a client with the --metrics-token (Authorization: Bearer)").response
        }
        return try await next(request, context)
    }

    package init() {}
}

/// `--no-auth`: read-only. Anything but GET and HEAD is refused before a route sees it.
package struct ReadOnlyGate: RouterMiddleware {
    package typealias Context = ServeRequestContext

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head else {
            return Problem(title: "Forbidden", status: 403, detail: RoleRefusal.writes.detail).response
        }
        return try await next(request, context)
    }

    package init() {}
}
