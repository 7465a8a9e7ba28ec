import ServeAccess
import ServeHTTP
import FeedConfig
import FeedFormats
import FeedState
import Foundation
import ReaderPages
import Hummingbird
import HummingbirdAuth

/// Who may do what in `serve`, decided here and nowhere else: each group of routes by job
/// carries its own middleware, and no route looks at who is asking to decide whether it
/// may answer.
///
/// | group | who | middleware |
/// |---|---|---|
/// | sign-in: `/login`, `/logout`, ClientLogin | anyone | the sign-in's own limits |
/// | assets: `/reader.css`, `/reader.js`, `/placeholder.svg` | anyone | — |
/// | operations: `/healthz` | anyone; details to the operator | ``OperationsAccess`` |
/// | operations: `/metrics` | the operator | ``OperationsAccess``, ``RequireOperations`` |
/// | reading: feeds, `/`, `/cards/{id}`, `/search`, `/sources`, OPML | a reader | sessions, ``Authenticate``, reader role |
/// | marks: `POST /cards/{id}/{mark}`, `POST /read` | a reader, with the form's token | the reading group's and ``FormGuard`` |
/// | item decisions: `POST /items/same`, `POST /items/apart` | an admin, with the form's token | the marks' and the admin role |
/// | Google Reader API | a reader, by header or token (never a cookie) | ``Authenticate`` without sessions, reader role |
/// | subscriptions (`subscription/quickadd`, `subscription/edit`) | an admin | the API's and the admin role |
/// | Fever API: `/api/fever/` | a reader, by the form's `api_key` | ``FeverAuthenticate`` (a wrong key: `auth: 0`) |
///
/// The operator is this machine (``ClientAddress/isLocal``), an admin, or a client with
/// the `--metrics-token`. Without accounts, whoever reaches the server is its owner (an
/// admin) until the first account exists; with `--no-auth`, a guest who reads.
extension FeedRoutes {
    func register(on router: Router<ServeRequestContext>) {
        router.add(middleware: ClientAddressMiddleware(trustedProxies: trustedProxies))
        router.add(middleware: AccessLog(write: logsRequests ? accessLog : nil, metrics: metrics))
        router.add(middleware: ProblemForUnknownRoutes())
        if !access.writes { router.add(middleware: ReadOnlyGate()) }
        if let signIn {
            // Loads and saves browsers' sessions; only the groups that take sessions
            // believe them (``browserGroup()``).
            router.add(middleware: SessionMiddleware(storage: loginSessions, configuration: SessionMiddlewareConfiguration(
                sessionCookieParameters: SessionCookieParameters(name: "aggregate_login", path: "/", secure: signIn.access.secureCookies, sameSite: .lax),
                defaultSessionExpiration: LoginPage.sessionLength)))
            LoginPage.register(on: router.group(), signIn: signIn)
        }
        registerClientLogin(on: router.group())
        registerAssets(on: router.group())
        let operations = browserGroup(router, requiring: nil, metricsToken: metricsToken).add(middleware: OperationsAccess(metricsToken: metricsToken))
        registerOperations(on: operations)
        let reading = browserGroup(router, requiring: .reader)
        registerReading(on: reading)
        if readsMarks {
            registerMarks(on: reading.group().add(middleware: FormGuard(sessions: sessions)))
            let deciding = reading.group().add(middleware: FormGuard(sessions: sessions))
            Self.require(.admin, on: deciding)
            registerItemDecisions(on: deciding)
        }
        let api = apiGroup(router, requiring: .reader)
        registerGoogleReader(on: api)
        registerFever(on: router.group().add(middleware: FeverAuthenticate(signIn: signIn, owner: owner)))
        registerSubscribing(on: api.group().add(middleware: AuthorizationPolicyMiddleware(RolePolicy<SignedIn>(.admin), deniedError: RoleRefusal.admin,
                                                                                           context: ServeRequestContext.self)))
    }

    /// Routes a browser reaches: a session counts, then the authenticator chain; with
    /// `role`, nobody is answered 401 (or sent to sign in) and a lesser role 403.
    private func browserGroup(_ router: Router<ServeRequestContext>, requiring role: AccountRole?,
                              metricsToken: String? = nil) -> RouterGroup<ServeRequestContext> {
        let group = router.group()
        if role != nil { group.add(middleware: SignInChallenge<ServeRequestContext>()) }
        if let signIn { group.add(middleware: Self.sessionAuthenticator(signIn.access.store)) }
        group.add(middleware: Authenticate(signIn: signIn, owner: owner, metricsToken: metricsToken))
        if let role { Self.require(role, on: group) }
        return group
    }

    /// The API's routes: authenticated by their header or token, never by a cookie the
    /// browser adds on its own.
    private func apiGroup(_ router: Router<ServeRequestContext>, requiring role: AccountRole) -> RouterGroup<ServeRequestContext> {
        let group = router.group().add(middleware: SignInChallenge<ServeRequestContext>())
            .add(middleware: Authenticate(signIn: signIn, owner: owner))
        Self.require(role, on: group)
        return group
    }

    private static func require(_ role: AccountRole, on group: RouterGroup<ServeRequestContext>) {
        group.add(middleware: IsAuthenticatedMiddleware<ServeRequestContext>())
        group.add(middleware: AuthorizationPolicyMiddleware(RolePolicy<SignedIn>(role), deniedError: role == .admin ? RoleRefusal.admin : RoleRefusal.reader,
                                                           context: ServeRequestContext.self))
    }

    /// hummingbird-auth's session authenticator on the accounts: a session made under an
    /// older password has ended.
    private static func sessionAuthenticator(_ store: any AccountStore) -> some RouterMiddleware<ServeRequestContext> {
        SessionAuthenticator(users: UserSessionClosureRepository { (session: LoginSession, _) -> SignedIn? in
            guard let account = try await store.account(id: session.user), account.passwordVersion == session.passwordVersion else { return nil }
            return SignedIn(account: account, credential: .session)
        }, context: ServeRequestContext.self)
    }

    private func registerAssets(on group: RouterGroup<ServeRequestContext>) {
        group.get("/reader.css") { request, _ in
            HTTPAnswer(body: ReaderPage.stylesheet, contentType: "text/css; charset=utf-8", lastModified: nil, maxAge: 3600).response(to: request)
        }
        group.get("/reader.js") { request, _ in
            HTTPAnswer(body: ReaderPage.script, contentType: "text/javascript; charset=utf-8", lastModified: nil, maxAge: 3600).response(to: request)
        }
        group.get("/placeholder.svg") { request, _ in
            HTTPAnswer(body: ReaderPage.placeholder, contentType: "image/svg+xml", lastModified: nil, maxAge: 86_400).response(to: request)
        }
    }

    private func registerOperations(on group: RouterGroup<ServeRequestContext>) {
        // Open to anyone, for load balancers; each source's state and errors (which name
        // upstream hosts) only to the operator.
        group.get("/healthz") { request, context in await self.healthz(request, detailed: context.seesOperations) }
        if metrics.registry != nil {
            group.group().add(middleware: RequireOperations()).get("/metrics") { _, _ in
                Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                         body: ResponseBody(byteBuffer: ByteBuffer(bytes: self.metrics.exposition(ages: await self.health.ages))))
            }
        }
    }
}
