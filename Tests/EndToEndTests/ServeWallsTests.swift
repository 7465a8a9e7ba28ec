import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// `serve`'s walls with the built binary (issue 59): who may change Sources.yml, what a
/// subscription may fetch, bodies that never end, clients behind a proxy, sign-ins that
/// cannot lock people out or fill the cores, and an access log without secrets.
@Suite(.serialized) struct ServeWallsTests {
    static let password = "a long enough password"
    static let readerPassword = "another long password"
    static let form = ("Content-Type", "application/x-www-form-urlencoded")

    static func basic(_ name: String, _ password: String) -> (String, String) {
        ("Authorization", "Basic " + Data("\(name):\(password)".utf8).base64EncodedString())
    }

    /// ann, the first user (an admin), and bob, a reader.
    static func addPeople(_ session: FixtureSession) async throws {
        let ann = try await session.workspace.run(arguments: ["user", "add", "ann", "--password-stdin"], stdin: password + "\n")
        #expect(ann.stderr == "aggregate: added ann (admin); `aggregate serve` now asks people to sign in\n")
        let bob = try await session.workspace.run(arguments: ["user", "add", "bob", "--password-stdin"], stdin: readerPassword + "\n")
        #expect(bob.stderr == "aggregate: added bob (reader); `aggregate serve` now asks people to sign in\n")
    }

    static func withPeopleServing(arguments: [String] = [], _ body: (FixtureSession, ServeTests.Served) async throws -> Void) async throws {
        try await ServeTests.withServe(sources: FixtureWorld.only("cabify"), arguments: arguments, prepare: addPeople, body)
    }

    @Test func rolesAreListedAndChanged() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            try await Self.addPeople(session)
            let list = try await session.workspace.run(arguments: ["user", "list"])
            #expect(list.stdout.split(separator: "\n").map { $0.split(separator: "\t").prefix(2).joined(separator: " ") } == ["ann admin", "bob reader"])
            let role = try await session.workspace.run(arguments: ["user", "role", "bob", "admin"])
            #expect(role.status == 0 && role.stderr == "aggregate: bob is now an admin\n")
            #expect(try await session.workspace.run(arguments: ["user", "list"]).stdout.contains("bob\tadmin\t"))
            let bad = try await session.workspace.run(arguments: ["user", "role", "bob", "owner"])
            #expect(bad.status == 2 && bad.stderr.contains(#"the role is admin or reader, got "owner""#), "\(bad.stderr)")
            let nobody = try await session.workspace.run(arguments: ["user", "role", "carol", "reader"])
            #expect(nobody.status == 2 && nobody.stderr == "aggregate: no user is named carol (`aggregate user list` lists them)\n")
            let third = try await session.workspace.run(arguments: ["user", "add", "cat", "--admin", "--password-stdin"], stdin: Self.password + "\n")
            #expect(third.stderr == "aggregate: added cat (admin); `aggregate serve` now asks people to sign in\n")
        }
    }

    /// A reader's unsubscribe changes nothing; an admin's of a hand-written entry neither.
    @Test func onlyAnAdminChangesSourcesYmlAndNeverAHandWrittenEntry() async throws {
        try await Self.withPeopleServing(arguments: ["--allow-private-feeds"]) { session, served in
            let api = served.base + "/api/greader/reader/api/0"
            let path = session.workspace.url.appendingPathComponent("Sources.yml")
            let before = try Data(contentsOf: path)
            let asReader = try await ServeTests.get(api + "/subscription/edit", method: .POST,
                                                    headers: [Self.form, Self.basic("bob", Self.readerPassword)], body: "ac=unsubscribe&s=feed/cabify")
            #expect(asReader.status == 403 && asReader.body.contains("only an admin may do this"), "\(asReader.body)")
            let quick = try await ServeTests.get(api + "/subscription/quickadd", method: .POST, headers: [Self.form, Self.basic("bob", Self.readerPassword)],
                                                 body: "quicksub=" + session.base.absoluteString + "/feed/news.rss.xml")
            #expect(quick.status == 403)
            #expect(try Data(contentsOf: path) == before, "the file is byte-identical")
            // cabify's entry carries a setting the API does not write (its timeout): the admin cannot remove it either.
            let asAdmin = try await ServeTests.get(api + "/subscription/edit", method: .POST,
                                                   headers: [Self.form, Self.basic("ann", Self.password)], body: "ac=unsubscribe&s=feed/cabify")
            #expect(asAdmin.status == 409 && asAdmin.body.contains("has settings besides id, name, plugin, url and tags"), "\(asAdmin.body)")
            #expect(try Data(contentsOf: path) == before)
            // Reading is every person's.
            #expect(try await ServeTests.get(api + "/subscription/list", headers: [Self.basic("bob", Self.readerPassword)]).status == 200)
        }
    }

    /// What a subscription fetches: public addresses only, in every spelling and through
    /// redirects, with one answer for every refusal; `--allow-private-feed(s)` opts in.
    @Test func subscriptionsFetchPublicAddressesOnly() async throws {
        let elsewhere = FixtureServer(upstreams: FixtureWorld.server().upstreams, host: "127.0.0.2")
        try await elsewhere.withRunning { otherHost in
            try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
                try await Self.addPeople(session)
                let port = session.base.port ?? 0
                let redirecting = session.base.absoluteString + "/redirect/news"
                session.server.control.set("unknown", Array(repeating: Fault(redirectTo: otherHost.absoluteString + "/feed/news.rss.xml"), count: 10))
                let candidates = [session.base.absoluteString + "/feed/news.rss.xml", "http://2130706433:\(port)/feed/news.rss.xml",
                                  "http://0x7f000001:\(port)/feed/news.rss.xml", redirecting]
                func quickadd(_ served: ServeTests.Served, _ url: String) async throws -> [String: Any] {
                    let answer = try await ServeTests.get(served.base + "/api/greader/reader/api/0/subscription/quickadd", method: .POST,
                                                          headers: [Self.form, Self.basic("ann", Self.password)],
                                                          body: "quicksub=" + (url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
                    #expect(answer.status == 200, "\(answer.body)")
                    return try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
                }
                let path = session.workspace.url.appendingPathComponent("Sources.yml")
                let before = try Data(contentsOf: path)
                // 127.0.0.1 allowed as if public: the first hop is fetched, its redirect to 127.0.0.2 is not.
                var served = try await ServeTests.Served.start(session, arguments: ["--allow-private-feed", "127.0.0.1/32"])
                do {
                    let answer = try await quickadd(served, redirecting)
                    #expect(answer["numResults"] as? Int == 0)
                    #expect(answer["error"] as? String == "no feed that this server may subscribe to was found at that address")
                    #expect(served.log.contains("the address is not a public one"), "\(served.log)")
                } catch {
                    await served.stop()
                    throw error
                }
                await served.stop()
                served = try await ServeTests.Served.start(session)
                do {
                    for url in candidates {
                        let answer = try await quickadd(served, url)
                        #expect(answer["numResults"] as? Int == 0, "\(url)")
                        #expect(answer["error"] as? String == "no feed that this server may subscribe to was found at that address", "\(url)")
                    }
                    // A closed port and a page that is not a feed: the same words.
                    for url in ["http://127.0.0.1:1/feed.xml", session.base.absoluteString + "/reqres/api/users"] {
                        #expect(try await quickadd(served, url)["error"] as? String == "no feed that this server may subscribe to was found at that address")
                    }
                    // Nor itself, by any name.
                    #expect(try await quickadd(served, served.base + "/feed.atom")["numResults"] as? Int == 0)
                } catch {
                    await served.stop()
                    throw error
                }
                await served.stop()
                #expect(try Data(contentsOf: path) == before, "nothing was written")
                #expect(session.server.control.requests(to: "feed").isEmpty, "nothing private was asked")
                #expect(elsewhere.control.requests(to: "feed").isEmpty)

                served = try await ServeTests.Served.start(session, arguments: ["--allow-private-feeds"])
                do {
                    for url in candidates {
                        #expect(try await quickadd(served, url)["numResults"] as? Int == 1, "\(url)")
                    }
                    #expect(elsewhere.control.requests(to: "feed").count >= 1, "the redirect was followed to the other host")
                    #expect(try await quickadd(served, served.base + "/feed.atom")["numResults"] as? Int == 0, "never itself")
                } catch {
                    await served.stop()
                    throw error
                }
                await served.stop()
            }
        }
    }

    /// Twenty connections that send a request head and never their body hold every
    /// connection only until the body deadline: answered 408 and closed.
    @Test func silentBodiesAreClosedByTheirDeadline() async throws {
        try await Self.withPeopleServing(arguments: ["--max-connections", "20", "--body-timeout", "2"]) { _, served in
            let started = ContinuousClock.now
            let clients = try await withThrowingTaskGroup(of: ServeLimitsTests.RawConnection.self) { group in
                for _ in 0..<20 { group.addTask { try await ServeLimitsTests.RawConnection.open(served.base) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let head = "POST /login HTTP/1.1\r\nHost: a\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nname=ann"
            async let answers = withThrowingTaskGroup(of: (text: String, closed: Bool).self) { group in
                for connection in clients { group.addTask { try await connection.exchange(head, limit: .seconds(30)) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // A probe meanwhile (once the server has taken up the twenty): refused while they
            // hold the connections, answered within the deadline's reach.
            try await Task.sleep(for: .milliseconds(500))
            var probed: Duration?
            for _ in 0..<100 {
                if let answer = try? await ServeTests.get(served.base + "/healthz"), answer.status == 200 {
                    probed = ContinuousClock.now - started
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            let closed = try await answers
            #expect(closed.count == 20)
            #expect(closed.allSatisfy { $0.closed && $0.text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n") }, "\(closed.map(\.text))")
            let probe = try #require(probed)
            #expect(probe < .seconds(8), "\(probe)")
        }
    }

    /// Behind a trusted proxy each client is counted apart: ten wrong passwords from one
    /// forwarded address lock that address out for that person, not another address.
    @Test func throughATrustedProxyEachClientIsCountedApart() async throws {
        try await Self.withPeopleServing(arguments: ["--trusted-proxy", "127.0.0.1/32", "--metrics"]) { _, served in
            func attempt(from address: String, _ password: String) async throws -> Int {
                try await ServeTests.get(served.base + "/feed.jsonl", headers: [("X-Forwarded-For", address), Self.basic("ann", password)]).status
            }
            var statuses: [Int] = []
            for index in 0..<11 { statuses.append(try await attempt(from: "203.0.113.1", "wrong \(index)")) }
            #expect(statuses == Array(repeating: 401, count: 10) + [429])
            #expect(try await attempt(from: "203.0.113.1", Self.password) == 429)
            #expect(try await attempt(from: "203.0.113.2", Self.password) == 200)
            // The proxy's clients are not this machine.
            #expect(try await ServeTests.get(served.base + "/metrics", headers: [("X-Forwarded-For", "203.0.113.3")]).status == 403)
            #expect(try await ServeTests.get(served.base + "/metrics", headers: [("X-Forwarded-For", "203.0.113.3"), Self.basic("ann", Self.password)]).status == 200)
            #expect(try await ServeTests.get(served.base + "/metrics").status == 200, "the proxy's own requests are")
        }
    }

    /// Two hundred attempts at once from one address: no more password checks than the
    /// address may have (a check shows as 401; the rest are refused before one).
    @Test func twoHundredConcurrentAttemptsRunAtMostTheAllowedChecks() async throws {
        try await Self.withPeopleServing { _, served in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        try await ServeTests.get(served.base + "/login", method: .POST, headers: [Self.form], body: "name=ann&password=wrong\(index)",
                                                 followRedirects: false).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 401 }.count <= 10, "\(statuses.filter { $0 == 401 }.count) checks")
            #expect(statuses.allSatisfy { $0 == 401 || $0 == 429 })
            #expect(statuses.contains(429))
        }
    }

    /// No password and no token reaches the access log, in any shape a client sends it.
    @Test func theAccessLogHoldsNoSecret() async throws {
        try await Self.withPeopleServing { session, served in
            let made = try await session.workspace.run(arguments: ["user", "token", "ann", "--label", "log test"])
            let token = made.stdout.trimmingCharacters(in: .newlines)
            let secret = String(token.split(separator: "_").last ?? "")
            let login = served.base + "/api/greader/accounts/ClientLogin"
            let targets = [
                "/feed.atom?token=\(token)", "/feed.atom?TOKEN=\(token)", "/feed.atom?%74oken=\(token)", "/feed.atom?T=\(token)",
                "/feed.atom?x=1&access_token=\(token)", "/cards/\(token)", "/api/greader/reader/api/0/edit-tag?T=\(Self.password)",
            ]
            for target in targets { _ = try await ServeTests.get(served.base + target) }
            let get = try await ServeTests.get(login + "?Email=ann&Passwd=\(Self.password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
            #expect(get.status == 405 && get.headers.first(name: "allow") == "POST")
            let post = try await ServeTests.get(login + "?Passwd=\(secret)", method: .POST, headers: [Self.form],
                                                body: "Email=ann&Passwd=" + (Self.password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
            #expect(post.status == 200 && post.body.hasPrefix("SID=agg_"), "\(post.body)")
            let log = served.log
            #expect(log.contains("GET /feed.atom?token=REDACTED 200"), "\(log)")
            #expect(log.contains("GET /feed.atom?%74oken=REDACTED 401"), "\(log)")
            #expect(log.contains("GET /feed.atom?T=REDACTED"), "\(log)")
            #expect(log.contains("GET /cards/REDACTED"), "\(log)")
            #expect(!log.contains(secret), "\(log)")
            #expect(!log.contains(Self.password) && !log.contains(Self.password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""), "\(log)")
            let issued = String(post.body.split(separator: "\n").first?.dropFirst("SID=".count) ?? "")
            #expect(!log.contains(String(issued.split(separator: "_").last ?? "none")))
        }
    }

    /// A `serve` started open on this machine closes when the first user is added.
    @Test func theFirstUserClosesARunningServe() async throws {
        try await ServeTests.withServe(sources: FixtureWorld.only("cabify")) { session, served in
            #expect(try await ServeTests.get(served.base + "/feed.jsonl").status == 200)
            let added = try await session.workspace.run(arguments: ["user", "add", "ann", "--password-stdin"], stdin: Self.password + "\n")
            #expect(added.status == 0)
            #expect(try await ServeReloadTests.eventually { try await ServeTests.get(served.base + "/feed.jsonl").status == 401 })
            #expect(try await ServeTests.get(served.base + "/feed.jsonl", headers: [Self.basic("ann", Self.password)]).status == 200)
        }
    }

    @Test func unsafeStartsAreRefused() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let open = try await session.run("--offline", "serve", "--port", "0", "--base-url", "https://feeds.example.org")
            #expect(open.status == 2)
            #expect(open.stderr.hasPrefix("aggregate: serve --base-url https://feeds.example.org would let anyone who reaches it read every feed, and no user is set up."),
                    "\(open.stderr)")
            let wide = try await session.run("--offline", "serve", "--port", "0", "--trusted-proxy", "0.0.0.0/0")
            #expect(wide.status == 2)
            #expect(wide.stderr.contains("--trusted-proxy 0.0.0.0/0 is wider than /8"), "\(wide.stderr)")
            let wide6 = try await session.run("--offline", "serve", "--port", "0", "--trusted-proxy", "2001:db8::/16")
            #expect(wide6.status == 2 && wide6.stderr.contains("is wider than /32"), "\(wide6.stderr)")
        }
    }
}
