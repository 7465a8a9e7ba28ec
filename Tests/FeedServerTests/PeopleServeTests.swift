import FeedServer
@testable import ServeAccess
@testable import ServeHTTP
import FeedSupport
import FeedSourceTesting
import FeedState
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// `serve` with people (issue 43): signing in four ways, marks per person, tokens until
/// revoked, sessions that end with a new password, throttled sign-ins, and `--no-auth`.
@Suite struct PeopleServeTests {
    static let html: HTTPFields = [.accept: "text/html"]

    /// A state with two people, ann and bob, and a token of ann's.
    static func people() async throws -> (state: EngineState, token: String) {
        let state = EngineState.inMemory()
        let ann = try await state.accounts.add(name: "ann", passwordHash: try await Passwords.hash("ann's password"), at: Date())
        _ = try await state.accounts.add(name: "bob", passwordHash: try await Passwords.hash("bob's password"), at: Date())
        let made = AccountToken.make(user: ann.id, label: "phone", at: Date())
        try await state.accounts.add(made.token, secretHash: made.secretHash)
        return (state, made.text)
    }

    static func basic(_ name: String, _ password: String) -> String {
        "Basic " + Data("\(name):\(password)".utf8).base64EncodedString()
    }

    static func accounts(secure: Bool = false) -> @Sendable (EngineState) -> AccessPolicy {
        { state in .accounts(AccountAccess(store: state.accounts, secureCookies: secure)) }
    }

    /// Signs in with the form; the session cookie (`name=value`) and the whole header.
    static func signIn(_ served: ServedInProcess, _ name: String, _ password: String) async throws -> (cookie: String, header: String) {
        let answer = try await served.client.execute(uri: "/login", method: .post,
                                                     headers: [.contentType: "application/x-www-form-urlencoded"],
                                                     body: ByteBuffer(string: "name=\(name)&password=\(password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")&next=%2F%3Fview%3Dall"))
        #expect(answer.status == .seeOther)
        #expect(answer.header("location") == "/?view=all")
        let header = try #require(answer.headers[values: .setCookie].first { $0.hasPrefix("aggregate_login=") })
        return (String(header.prefix { $0 != ";" }), header)
    }

    @Test func nobodySignedInIsAskedToSignIn() async throws {
        let (state, _) = try await Self.people()
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), state: state, access: Self.accounts()) { served in
            await served.clock.untilSleeping(1)
            let feed = try await served.get("/feed.atom")
            #expect(feed.status == .unauthorized)
            #expect(feed.header("www-authenticate") == #"Basic realm="aggregate", charset="UTF-8""#)
            #expect(feed.text.contains("sign in first"))
            let page = try await served.get("/?view=starred", headers: Self.html)
            #expect(page.status == .seeOther)
            #expect(page.header("location") == "/login?next=/%3Fview%3Dstarred")
            #expect(try await served.get("/cards/cabify:MUG").status == .unauthorized)
            #expect(try await served.client.execute(uri: "/read", method: .post, headers: [:], body: ByteBuffer(string: "ids=cabify:MUG")).status == .unauthorized)
            // What needs no one.
            #expect(try await served.get("/login").status == .ok)
            #expect(try await served.get("/healthz").status == .ok)
            #expect(try await served.get("/reader.css").status == .ok)
        }
    }

    /// The security sweep: with accounts, every route that changes state or shows cards
    /// answers 401 (or sends a browser to sign in) without a session, token or API sign-in,
    /// and changes nothing.
    @Test func noRouteChangesOrShowsStateWithoutSomeone() async throws {
        let (state, _) = try await Self.people()
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), state: state, access: Self.accounts()) { served in
            await served.clock.untilSleeping(1)
            let api = "/api/greader/reader/api/0"
            let posts = ["/cards/cabify:MUG/read", "/cards/cabify:MUG/unread", "/cards/cabify:MUG/star", "/cards/cabify:MUG/unstar",
                         "/read", api + "/edit-tag", api + "/mark-all-as-read", api + "/stream/items/contents",
                         api + "/subscription/quickadd", api + "/subscription/edit"]
            let form = "ids=cabify:MUG&before=2100-01-01T00:00:00Z&i=1&a=user/-/state/com.google/read&s=user/-/state/com.google/reading-list"
                + "&quicksub=\(served.base.absoluteString)/feed/news.rss.xml&ac=unsubscribe&s=feed/cabify"
            for path in posts {
                for headers: HTTPFields in [[:], [.authorization: "Bearer agg_00000000_" + String(repeating: "0", count: 64)],
                                            [.authorization: "GoogleLogin auth=none"], [.cookie: "aggregate_login=forged"]] {
                    var headers = headers
                    headers[.contentType] = "application/x-www-form-urlencoded"
                    let answer = try await served.client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: form))
                    #expect(answer.status == .unauthorized, "POST \(path) with \(headers)")
                }
            }
            let gets = ["/feed.atom", "/feed.json", "/feed.rss", "/feed.jsonl", "/cards/cabify:MUG", "/sources", "/sources.opml",
                        "/search?q=mug", "/?view=all", api + "/unread-count", api + "/subscription/list", api + "/user-info",
                        api + "/stream/contents/user/-/state/com.google/reading-list", api + "/stream/items/ids", "/api/greader/reader/atom/feed/cabify"]
            for path in gets {
                #expect(try await served.get(path).status == .unauthorized, "GET \(path)")
                #expect(try await served.get(path, headers: Self.html).status == .seeOther, "GET \(path) from a browser")
            }
            #expect(try await state.marks.marks(of: 1).unreadCounts() == ["cabify": 3])
            #expect(try await state.marks.marks(of: 2).unreadCounts() == ["cabify": 3])
            #expect(try await state.marks.unreadCounts() == ["cabify": 3])
            // Nothing was fetched to subscribe to, nothing unsubscribed.
            #expect(served.fixture.control.requests(to: "feed").isEmpty)
            #expect(try await served.get("/sources", headers: [.authorization: Self.basic("ann", "ann's password")]).text.contains(#""id":"cabify""#))
        }
    }

    @Test func twoPeopleReadTheSameCardsWithTheirOwnMarks() async throws {
        let (state, _) = try await Self.people()
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), state: state, access: Self.accounts()) { served in
            await served.clock.untilSleeping(1)
            let ann = try await Self.signIn(served, "ann", "ann's password")
            let annHeaders: HTTPFields = [.cookie: ann.cookie, .accept: "text/html"]
            let first = try await served.get("/", headers: annHeaders)
            #expect(first.status == .ok)
            #expect(ReadingServeTests.unread(first.text) == 3)
            #expect(first.text.contains(#"<form class="sign-out" method="post" action="/logout"><span class="who">ann</span>"#))
            // Ann reads a card: her form, her session, her mark.
            let browser = try ReadingServeTests.Browser(first)
            var headers = browser.headers
            headers[.cookie] = browser.cookie + "; " + ann.cookie
            let marked = try await ReadingServeTests.post(served, "/cards/cabify:MUG/read", "token=\(browser.token)&return=%2F", headers: headers)
            #expect(marked.status == .seeOther)
            #expect(ReadingServeTests.unread(try await served.get("/", headers: annHeaders).text) == 2)
            // Bob, with Basic, has read nothing.
            let bob = try await served.get("/", headers: [.authorization: Self.basic("bob", "bob's password"), .accept: "text/html"])
            #expect(bob.status == .ok)
            #expect(ReadingServeTests.unread(bob.text) == 3)
            #expect(try await state.marks.marks(of: 1).unreadCounts() == ["cabify": 2])
            #expect(try await state.marks.marks(of: 2).unreadCounts() == ["cabify": 3])
            #expect(try await state.marks.unreadCounts() == ["cabify": 3])
        }
    }

    @Test func theSessionCookieCarriesItsAttributesAndEndsWithANewPassword() async throws {
        let (state, _) = try await Self.people()
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), state: state, access: Self.accounts(secure: true)) { served in
            await served.clock.untilSleeping(1)
            let ann = try await Self.signIn(served, "ann", "ann's password")
            let attributes = Set(ann.header.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces).split(separator: "=").first.map(String.init) ?? "" })
            #expect(attributes.isSuperset(of: ["HttpOnly", "Secure", "SameSite", "Path", "Expires"]), "\(ann.header)")
            #expect(ann.header.contains("SameSite=Lax"))
            #expect(try await served.get("/feed.atom", headers: [.cookie: ann.cookie]).status == .ok)
            _ = try await state.accounts.setPassword(named: "ann", hash: try await Passwords.hash("a new password"))
            #expect(try await served.get("/feed.atom", headers: [.cookie: ann.cookie]).status == .unauthorized)
            // Signing out ends a session too.
            let again = try await Self.signIn(served, "ann", "a new password")
            #expect(try await served.client.execute(uri: "/logout", method: .post, headers: [.cookie: again.cookie]).status == .seeOther)
            #expect(try await served.get("/feed.atom", headers: [.cookie: again.cookie]).status == .unauthorized)
        }
    }

    @Test func aTokenWorksUntilRevokedAndIsNeverWrittenIntoAFeed() async throws {
        let (state, token) = try await Self.people()
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), state: state, access: Self.accounts()) { served in
            await served.clock.untilSleeping(1)
            #expect(try await served.get("/feed.atom", headers: [.authorization: "Bearer \(token)"]).status == .ok)
            let byQuery = try await served.get("/feed.atom?token=\(token)&per_page=2")
            #expect(byQuery.status == .ok)
            #expect(!byQuery.text.contains(token))
            #expect(!byQuery.text.contains("token="))
            #expect(byQuery.text.contains("per_page=2"), "the feed names its own address, without the token")
            let wrong = try await served.get("/feed.atom", headers: [.authorization: "Bearer agg_00000000_" + String(repeating: "0", count: 64)])
            #expect(wrong.status == .unauthorized)
            #expect(wrong.text.contains("the token is not one of this server's"))
            let id = try #require(AccountToken.parse(token)?.id)
            #expect(try await state.accounts.revoke(token: id, of: 1))
            #expect(try await served.get("/feed.atom", headers: [.authorization: "Bearer \(token)"]).status == .unauthorized)
            #expect(try await served.get("/feed.atom?token=\(token)").status == .unauthorized)
        }
    }

    @Test func wrongPasswordsAreThrottledPerPersonAndAddress() async throws {
        let (state, _) = try await Self.people()
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), state: state, access: Self.accounts()) { served in
            await served.clock.untilSleeping(1)
            var statuses: [Int] = []
            for attempt in 0..<12 {
                let answer = try await served.get("/feed.jsonl", headers: [.authorization: Self.basic("bob", "wrong \(attempt)")])
                statuses.append(answer.status.code)
                if answer.status == .tooManyRequests {
                    #expect(Int(answer.header("retry-after") ?? "") ?? 0 > 0)
                }
            }
            #expect(statuses == Array(repeating: 401, count: SignInLimits.perPersonAndAddress) + Array(repeating: 429, count: 12 - SignInLimits.perPersonAndAddress))
            // The form says the same, even with bob's right password, from this address.
            let form = try await served.client.execute(uri: "/login", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                                                       body: ByteBuffer(string: "name=bob&password=bob%27s+password"))
            #expect(form.status == .tooManyRequests)
            // A name that does not exist is counted as a person of its own, and answered as a wrong password.
            #expect(try await served.get("/feed.jsonl", headers: [.authorization: Self.basic("nobody", "wrong")]).status == .unauthorized)
            // Nobody else is locked out from this address: ann signs in.
            #expect(try await served.get("/feed.jsonl", headers: [.authorization: Self.basic("ann", "ann's password")]).status == .ok)
        }
    }

    @Test func aCrossSiteSignInIsRefused() async throws {
        let (state, _) = try await Self.people()
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), state: state, access: Self.accounts()) { served in
            let answer = try await served.client.execute(uri: "/login", method: .post,
                                                         headers: [.contentType: "application/x-www-form-urlencoded", .origin: "https://evil.example"],
                                                         body: ByteBuffer(string: "name=ann&password=ann%27s+password"))
            #expect(answer.status == .forbidden)
            #expect(answer.headers[values: .setCookie].isEmpty)
        }
    }

    @Test func withoutAuthEverythingIsReadOnly() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), access: { _ in .readOnly }) { served in
            await served.clock.untilSleeping(1)
            #expect(try await served.get("/feed.atom").status == .ok)
            let page = try await served.get("/", headers: Self.html)
            #expect(page.status == .ok)
            #expect(!page.text.contains(#"method="post""#))
            let post = try await served.client.execute(uri: "/cards/cabify:MUG/read", method: .post, headers: [:], body: ByteBuffer(string: ""))
            #expect(post.status == .forbidden)
            #expect(post.text.contains("read-only"))
            #expect(try await served.client.execute(uri: "/login", method: .post, headers: [:]).status == .forbidden)
        }
    }
}

/// Addresses and blocks for `--trusted-proxy` and the loopback rule.
@Suite struct IPRangeTests {
    @Test func blocksContainTheirAddressesOnly() throws {
        let ten = try #require(IPRange("10.0.0.0/8"))
        #expect(ten.contains("10.1.2.3") && !ten.contains("11.0.0.1") && !ten.contains("::1"))
        #expect(ten.contains("::ffff:10.9.9.9"), "an IPv4 address as IPv6 gives it")
        let one = try #require(IPRange("192.168.1.7"))
        #expect(one.contains("192.168.1.7") && !one.contains("192.168.1.8"))
        let six = try #require(IPRange("fd00::/8"))
        #expect(six.contains("fd12:3456::1") && !six.contains("fe80::1"))
        let odd = try #require(IPRange("172.16.0.0/12"))
        #expect(odd.contains("172.31.255.255") && !odd.contains("172.32.0.0"))
        for bad in ["", "10.0.0.0/33", "10.0.0/8", "host.example", "::1/129", "10.0.0.0/-1"] {
            #expect(IPRange(bad) == nil, "\(bad)")
        }
        #expect(IPRange.isLoopbackHost("127.0.0.1") && IPRange.isLoopbackHost("::1") && IPRange.isLoopbackHost("localhost") && IPRange.isLoopbackHost("127.8.8.8"))
        #expect(!IPRange.isLoopbackHost("0.0.0.0") && !IPRange.isLoopbackHost("::") && !IPRange.isLoopbackHost("192.168.1.2"))
    }
}
