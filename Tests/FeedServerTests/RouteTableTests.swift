import FeedServer
@testable import ServeAccess
@testable import ServeHTTP
import FeedSourceTesting
import FeedState
import FeedSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

/// Who may do what in `serve`, as one table (issue 59): every route × every way of
/// asking → the status it answers. The rows are the routes; the columns who asks. Each
/// cell is requested once; the test fails with every cell that differs.
@Suite struct RouteTableTests {
    /// Who asks.
    enum Asker: String, CaseIterable, Sendable {
        case nobody, reader, admin, apiToken, sessionWithoutCSRFToken, viaUntrustedProxy, viaTrustedProxy
    }

    struct Row: Sendable {
        var method: HTTPRequest.Method
        var path: String
        var form: String?
        /// The status for each asker, in ``Asker/allCases`` order.
        var statuses: [Int]
    }

    static let api = "/api/greader/reader/api/0"

    /// nobody, reader, admin, API token (a reader's), session without the form token,
    /// via an untrusted proxy (forwarding headers from a peer not trusted), via a trusted
    /// proxy (its header names the reader; the client is a public address).
    static let table: [Row] = [
        // Reading: a reader, whoever vouches for them.
        Row(method: .get, path: "/feed.atom", statuses: [401, 200, 200, 200, 200, 401, 200]),
        Row(method: .get, path: "/feed.jsonl?source=cabify", statuses: [401, 200, 200, 200, 200, 401, 200]),
        Row(method: .get, path: "/", statuses: [401, 200, 200, 200, 200, 401, 200]),
        Row(method: .get, path: "/cards/cabify:MUG", statuses: [401, 200, 200, 200, 200, 401, 200]),
        Row(method: .get, path: "/search?q=mug", statuses: [401, 200, 200, 200, 200, 401, 200]),
        Row(method: .get, path: "/sources", statuses: [401, 200, 200, 200, 200, 401, 200]),
        Row(method: .get, path: "/sources.opml", statuses: [401, 200, 200, 200, 200, 401, 200]),
        // Marks: cookie-backed, so only with the form's token, which none of these sends.
        Row(method: .post, path: "/cards/cabify:MUG/star", form: "return=/", statuses: [401, 403, 403, 403, 403, 401, 403]),
        Row(method: .post, path: "/read", form: "ids=cabify:MUG", statuses: [401, 403, 403, 403, 403, 401, 403]),
        // A person's word on items: an admin's, with the form's token, which none of these sends.
        Row(method: .post, path: "/items/apart", form: "ids=cabify:MUG&ids=cabify:TSHIRT", statuses: [401, 403, 403, 403, 403, 401, 403]),
        // Operations: /healthz to anyone; /metrics to this machine or an admin.
        Row(method: .get, path: "/healthz", statuses: [200, 200, 200, 200, 200, 200, 200]),
        Row(method: .get, path: "/metrics", statuses: [200, 200, 200, 200, 200, 403, 403]),
        // Sign-in: open, POST only for the API's.
        Row(method: .get, path: "/login", statuses: [200, 200, 200, 200, 200, 200, 200]),
        Row(method: .post, path: "/login", form: "name=carol&password=wrong", statuses: [401, 401, 401, 401, 401, 401, 401]),
        Row(method: .get, path: "/api/greader/accounts/ClientLogin?Email=ann&Passwd=x", statuses: [405, 405, 405, 405, 405, 405, 405]),
        Row(method: .post, path: "/api/greader/accounts/ClientLogin", form: "Email=dave&Passwd=wrong", statuses: [403, 403, 403, 403, 403, 403, 403]),
        Row(method: .get, path: "/reader.css", statuses: [200, 200, 200, 200, 200, 200, 200]),
        // The Google Reader API: a header or a token, never the browser's cookie.
        Row(method: .get, path: api + "/subscription/list", statuses: [401, 200, 200, 200, 401, 401, 200]),
        Row(method: .get, path: api + "/unread-count", statuses: [401, 200, 200, 200, 401, 401, 200]),
        Row(method: .post, path: api + "/edit-tag", form: "i=1&a=user/-/state/com.google/starred", statuses: [401, 200, 200, 200, 401, 401, 200]),
        // Changing Sources.yml: admins only (this server has no file to change: 503 past the role).
        Row(method: .post, path: api + "/subscription/quickadd", form: "quicksub=https://feeds.example/a.xml",
            statuses: [401, 403, 503, 403, 401, 401, 403]),
        Row(method: .post, path: api + "/subscription/edit", form: "ac=unsubscribe&s=feed/cabify", statuses: [401, 403, 503, 403, 401, 401, 403]),
    ]

    static let proxyHeader = "X-Forwarded-User"

    /// ann (the first account: an admin), bob (a reader) and a token of bob's.
    static func people() async throws -> (state: EngineState, token: String) {
        let state = EngineState.inMemory()
        _ = try await state.accounts.add(name: "ann", passwordHash: try await Passwords.hash("ann's password"), at: Date())
        let bob = try await state.accounts.add(name: "bob", passwordHash: try await Passwords.hash("bob's password"), at: Date())
        let made = AccountToken.make(user: bob.id, label: "phone", at: Date())
        try await state.accounts.add(made.token, secretHash: made.secretHash)
        return (state, made.text)
    }

    static func headers(for asker: Asker, token: String, session: String) -> HTTPFields {
        let forwarded: HTTPFields = [HTTPField.Name("X-Forwarded-For")!: "203.0.113.9", HTTPField.Name(proxyHeader)!: "bob"]
        switch asker {
        case .nobody: return [:]
        case .reader: return [.authorization: PeopleServeTests.basic("bob", "bob's password")]
        case .admin: return [.authorization: PeopleServeTests.basic("ann", "ann's password")]
        case .apiToken: return [.authorization: "Bearer \(token)"]
        case .sessionWithoutCSRFToken: return [.cookie: session]
        case .viaUntrustedProxy, .viaTrustedProxy: return forwarded
        }
    }

    @Test func everyRouteAnswersEachAskerAsTheTableSays() async throws {
        let (state, token) = try await Self.people()
        let access: @Sendable (EngineState) -> AccessPolicy = { state in .accounts(AccountAccess(store: state.accounts, proxyHeader: Self.proxyHeader)) }
        let wrong = Mutex<[String]>([])
        // Through the router (no peer: this machine, unless forwarding headers say otherwise).
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), metrics: true, state: state, access: access) { served in
            await served.clock.untilSleeping(1)
            let session = try await PeopleServeTests.signIn(served, "bob", "bob's password").cookie
            for row in Self.table {
                for (column, asker) in Asker.allCases.enumerated() where asker != .viaTrustedProxy {
                    let status = try await Self.ask(served, row, headers: Self.headers(for: asker, token: token, session: session))
                    if status != row.statuses[column] { wrong.withLock { $0.append("\(row.method) \(row.path) as \(asker): \(status), not \(row.statuses[column])") } }
                }
            }
        }
        // Through a socket from 127.0.0.1, the trusted proxy.
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), metrics: true, state: state, access: access,
                                       trustedProxies: [try #require(IPRange("127.0.0.1/32"))], overSocket: true) { served in
            await served.clock.untilSleeping(1)
            let column = Asker.allCases.firstIndex(of: .viaTrustedProxy) ?? 0
            for row in Self.table {
                let status = try await Self.ask(served, row, headers: Self.headers(for: .viaTrustedProxy, token: token, session: ""))
                if status != row.statuses[column] { wrong.withLock { $0.append("\(row.method) \(row.path) via a trusted proxy: \(status), not \(row.statuses[column])") } }
            }
        }
        #expect(wrong.withLock { $0 } == [])
    }

    static func ask(_ served: ServedInProcess, _ row: Row, headers: HTTPFields) async throws -> Int {
        var headers = headers
        if row.form != nil { headers[.contentType] = "application/x-www-form-urlencoded" }
        let answer = try await served.client.execute(uri: row.path, method: row.method, headers: headers,
                                                     body: row.form.map { ByteBuffer(string: $0) })
        return Int(answer.status.code)
    }
}
