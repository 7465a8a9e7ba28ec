import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// Accounts with the built binary (issue 43): `aggregate user …`, `serve` refusing to
/// leave the loopback without them, tokens until revoked, a trusted proxy's header.
@Suite(.serialized) struct PeopleEndToEndTests {
    static let password = "a long enough password"

    static func basic(_ name: String, _ password: String) -> (String, String) {
        ("Authorization", "Basic " + Data("\(name):\(password)".utf8).base64EncodedString())
    }

    @Test func userCommandsManageAccountsAndTokensAndKeepNoSecretInClear() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let workspace = session.workspace
            let added = try await workspace.run(arguments: ["user", "add", "ann", "--password-stdin"], stdin: Self.password + "\n")
            #expect(added.status == 0, "\(added.stderr)")
            #expect(added.stderr == "aggregate: added ann (admin); `aggregate serve` now asks people to sign in\n")
            let again = try await workspace.run(arguments: ["user", "add", "ann", "--password-stdin"], stdin: Self.password + "\n")
            #expect(again.status == 2)
            #expect(again.stderr == "aggregate: a user named ann exists already (change the password with `aggregate user password ann`)\n")
            let noTerminal = try await workspace.run(arguments: ["user", "add", "bob"])
            #expect(noTerminal.status == 2)
            #expect(noTerminal.stderr == "aggregate: no terminal to ask for the password on: write it to stdin with --password-stdin (never as an argument)\n")
            let short = try await workspace.run(arguments: ["user", "add", "bob", "--password-stdin"], stdin: "short\n")
            #expect(short.status == 2)
            #expect(short.stderr == "aggregate: a password has 8 characters at least\n")
            let badName = try await workspace.run(arguments: ["user", "add", "b:b", "--password-stdin"], stdin: Self.password + "\n")
            #expect(badName.status == 2)
            #expect(badName.stderr.hasPrefix(#"Error: a user name is 1 to 64 letters, digits, '.', '_', '-' or '@', got "b:b""#))

            let made = try await workspace.run(arguments: ["user", "token", "ann", "--label", "phone"])
            #expect(made.status == 0)
            let token = made.stdout.trimmingCharacters(in: .newlines)
            let id = try #require(token.split(separator: "_").dropFirst().first.map(String.init))
            #expect(token.range(of: #"^agg_[0-9a-f]{8}_[0-9a-f]{64}$"#, options: .regularExpression) != nil, "\(token)")
            #expect(made.stderr == "aggregate: made token \(id) for ann; it is shown this once (revoke it with `aggregate user revoke ann \(id)`)\n")
            let listed = try await workspace.run(arguments: ["user", "tokens", "ann"])
            #expect(listed.stdout.hasPrefix("\(id)\tmade "))
            #expect(listed.stdout.hasSuffix("\tnever used\tphone\n"))
            let users = try await workspace.run(arguments: ["user", "list"])
            #expect(users.stdout.hasPrefix("ann\tadmin\tadded "))
            #expect(users.stdout.hasSuffix("\t1 token\n"))

            // Neither the password nor the token's secret is kept, shown or dumped in clear.
            let secret = String(token.split(separator: "_").last ?? "")
            let state = workspace.url.appendingPathComponent("state")
            for file in try FileManager.default.contentsOfDirectory(atPath: state.path) {
                let bytes = (try? Data(contentsOf: state.appendingPathComponent(file))) ?? Data()
                #expect(bytes.range(of: Data(Self.password.utf8)) == nil, "\(file)")
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file)")
            }
            let sources = try await workspace.run(arguments: ["sources"])
            #expect(!sources.stdout.contains(secret) && !sources.stdout.contains(Self.password))

            let wrongToken = try await workspace.run(arguments: ["user", "revoke", "ann", "00000000"])
            #expect(wrongToken.status == 2)
            #expect(wrongToken.stderr == "aggregate: ann has no token 00000000 (`aggregate user tokens ann` lists them)\n")
            #expect(try await workspace.run(arguments: ["user", "revoke", "ann", id]).status == 0)
            #expect(try await workspace.run(arguments: ["user", "tokens", "ann"]).stdout.isEmpty)
            let nobody = try await workspace.run(arguments: ["user", "remove", "carol"])
            #expect(nobody.status == 2)
            #expect(nobody.stderr == "aggregate: no user is named carol (`aggregate user list` lists them)\n")
            #expect(try await workspace.run(arguments: ["user", "remove", "ann"]).status == 0)
            #expect(try await workspace.run(arguments: ["user", "list"]).stdout.isEmpty)
        }
    }

    @Test func serveOnAnyAddressNeedsAUserOrNoAuth() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let refused = try await session.run("--offline", "serve", "--host", "0.0.0.0", "--port", "0")
            #expect(refused.status == 2)
            #expect(refused.stderr == """
                aggregate: serve --host 0.0.0.0 would let anyone who reaches it read every feed, and no user is set up. \
                Add one (`aggregate user add NAME`; people then sign in), or pass --no-auth to serve the feeds read-only to anyone.

                """)
            let badProxy = try await session.run("serve", "--auth-proxy-header", "X-Forwarded-User")
            #expect(badProxy.status == 2)
            #expect(badProxy.stderr.contains("--auth-proxy-header needs --trusted-proxy"))
        }
    }

    /// A browser's session is kept in the state (by a hash of its id): it outlives a
    /// restart of `serve`, and a Sign out ends it.
    @Test func aBrowserStaysSignedInAcrossARestartUntilItSignsOut() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            #expect(try await session.workspace.run(arguments: ["user", "add", "ann", "--password-stdin"], stdin: Self.password + "\n").status == 0)
            let html = ("Accept", "text/html")
            var served = try await ServeTests.Served.start(session)
            let signedIn: ServeTests.Answer
            do {
                signedIn = try await ServeTests.get(served.base + "/login", method: .POST, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                    body: "name=ann&password=" + (Self.password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
                                                    followRedirects: false)
            } catch {
                await served.stop()
                throw error
            }
            await served.stop()
            #expect(signedIn.status == 303, "\(signedIn.body)")
            let cookie = try #require(signedIn.headers.first(name: "set-cookie")?.split(separator: ";").first.map(String.init))
            let id = String(cookie.dropFirst("aggregate_login=".count))
            #expect(cookie.hasPrefix("aggregate_login=") && id.count > 16, "\(cookie)")

            served = try await ServeTests.Served.start(session)
            do {
                let page = try await ServeTests.get(served.base + "/", headers: [html, ("Cookie", cookie)], followRedirects: false)
                #expect(page.status == 200 && page.body.contains("ann"), "\(page.status)")
                // The session id is a secret: only its hash is kept.
                let state = session.workspace.url.appendingPathComponent("state")
                for file in try FileManager.default.contentsOfDirectory(atPath: state.path) {
                    let bytes = (try? Data(contentsOf: state.appendingPathComponent(file))) ?? Data()
                    #expect(bytes.range(of: Data(id.utf8)) == nil, "\(file)")
                }
                let out = try await ServeTests.get(served.base + "/logout", method: .POST, headers: [("Cookie", cookie), ("Origin", served.base)],
                                                   followRedirects: false)
                #expect(out.status == 303)
                #expect(try await ServeTests.get(served.base + "/", headers: [html, ("Cookie", cookie)], followRedirects: false).status == 303)
            } catch {
                await served.stop()
                throw error
            }
            await served.stop()
        }
    }

    @Test func aTokenServesFeedsUntilRevokedAndAProxyIsBelievedOnlyFromItsAddress() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            #expect(try await session.workspace.run(arguments: ["user", "add", "ann", "--password-stdin"], stdin: Self.password + "\n").status == 0)
            let token = try await session.workspace.run(arguments: ["user", "token", "ann"]).stdout.trimmingCharacters(in: .newlines)
            let id = String(token.split(separator: "_")[1])
            for (trusted, believed) in [("127.0.0.1", true), ("10.0.0.0/8", false)] {
                let served = try await ServeTests.Served.start(session, arguments: ["--auth-proxy-header", "X-Forwarded-User", "--trusted-proxy", trusted])
                do {
                    #expect(served.log.contains("people sign in"))
                    #expect(try await ServeTests.get(served.base + "/feed.atom").status == 401)
                    let proxied = try await ServeTests.get(served.base + "/feed.atom", headers: [("X-Forwarded-User", "ann")])
                    #expect(proxied.status == (believed ? 200 : 401), "trusted \(trusted)")
                    #expect(try await ServeTests.get(served.base + "/feed.atom", headers: [Self.basic("ann", Self.password)]).status == 200)
                    #expect(try await ServeTests.get(served.base + "/feed.atom", headers: [("Authorization", "Bearer \(token)")]).status == 200)
                    #expect(try await ServeTests.get(served.base + "/feed.atom?per_page=1&token=\(token)").status == 200)
                    if !believed {
                        #expect(try await session.workspace.run(arguments: ["user", "revoke", "ann", id]).status == 0)
                        #expect(try await ServeTests.get(served.base + "/feed.atom", headers: [("Authorization", "Bearer \(token)")]).status == 401)
                    }
                } catch {
                    await served.stop()
                    throw error
                }
                await served.stop()
                // Nothing of a credential reaches the access log (written out by the stop).
                #expect(!served.log.contains(token) && !served.log.contains(Self.password))
                #expect(served.log.contains("GET /feed.atom?per_page=1&token=REDACTED 200"), "\(served.log)")
            }
        }
    }
}

/// This machine's first IPv4 address that is not loopback, if it has one: a client that is
/// not "this machine" to `serve`.
enum OtherAddress {
    static let ipv4: String? = {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
            let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !text.hasPrefix("127.") { return text }
        }
        return nil
    }()
}

/// `serve` with people on every address, asked from this machine and from its other
/// address: `/metrics` and `/healthz`'s details are this machine's (or the metrics token's),
/// and a proxy header counts only from the trusted proxy.
@Suite(.serialized, .enabled(if: OtherAddress.ipv4 != nil, "this machine has no address but loopback"))
struct ServeFromAnotherAddressTests {
    @Test func metricsHealthDetailsAndTheProxyHeaderAreThisMachinesOnly() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            #expect(try await session.workspace.run(arguments: ["user", "add", "ann", "--password-stdin"], stdin: PeopleEndToEndTests.password + "\n").status == 0)
            let metricsToken = "a-metrics-token-for-the-scraper"
            let served = try await ServeTests.Served.start(session, arguments: [
                "--host", "0.0.0.0", "--metrics", "--metrics-token", metricsToken,
                "--auth-proxy-header", "X-Forwarded-User", "--trusted-proxy", "127.0.0.1"], listening: #"http://0\.0\.0\.0:\d+"#)
            let bound = String(served.base.split(separator: ":").last ?? "")
            let here = "http://127.0.0.1:\(bound)", there = "http://\(try #require(OtherAddress.ipv4)):\(bound)"

            #expect(try await ServeTests.get(here + "/metrics").status == 200)
            #expect(try await ServeTests.get(there + "/metrics").status == 403)
            #expect(try await ServeTests.get(there + "/metrics", headers: [("Authorization", "Bearer \(metricsToken)")]).status == 200)
            // Once the first refresh has said how cabify fared.
            var local = ""
            for _ in 0..<100 {
                local = try await ServeTests.get(here + "/healthz").body
                if local.contains(#""cabify""#) { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(local.contains(#""cabify""#), "\(local)")
            let remoteHealth = try await ServeTests.get(there + "/healthz")
            #expect(remoteHealth.status == 200 && remoteHealth.body.contains(#""sources":{}"#), "\(remoteHealth.body)")
            #expect(try await ServeTests.get(here + "/feed.atom", headers: [("X-Forwarded-User", "ann")]).status == 200)
            #expect(try await ServeTests.get(there + "/feed.atom", headers: [("X-Forwarded-User", "ann")]).status == 401)
            await served.stop()
        }
    }
}
