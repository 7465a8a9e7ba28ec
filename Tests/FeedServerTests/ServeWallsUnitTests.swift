@testable import FeedEngine
@testable import FeedServer
@testable import ServeAccess
@testable import ServeHTTP
import FeedSourceTesting
import FeedSupport
import FixtureServer
import Foundation
import HTTPTypes
import Testing

/// The parts of `serve`'s walls that are pure functions (issue 59): who the client is,
/// which addresses are public, what the access log keeps of a target, where a form may
/// send a browser back to.
@Suite struct ServeWallsUnitTests {
    static let trusted = [IPRange("127.0.0.1/32"), IPRange("10.0.0.0/24")].compactMap { $0 }

    static func client(_ peer: String?, _ fields: [(String, String)]) -> ClientAddress {
        var headers = HTTPFields()
        for (name, value) in fields { headers.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return ClientAddress(peer: peer, headers: headers, trustedProxies: trusted)
    }

    @Test func theClientIsTheNearestAddressNoTrustedProxyVouchesFor() {
        // Directly: the peer; loopback is this machine.
        #expect(Self.client("127.0.0.1", []) == ClientAddress(address: "127.0.0.1", isLocal: true, viaTrustedProxy: true))
        #expect(Self.client("127.0.0.2", []) == ClientAddress(address: "127.0.0.2", isLocal: true, viaTrustedProxy: false))
        #expect(Self.client("198.51.100.4", []) == ClientAddress(address: "198.51.100.4", isLocal: false, viaTrustedProxy: false))
        // From a trusted proxy: right to left, past the trusted hops.
        #expect(Self.client("127.0.0.1", [("X-Forwarded-For", "192.0.2.1, 203.0.113.7, 10.0.0.5")])
                == ClientAddress(address: "203.0.113.7", isLocal: false, viaTrustedProxy: true))
        #expect(Self.client("127.0.0.1", [("Forwarded", #"for=192.0.2.60;proto=http, for="[2001:db8::1]:4711""#)])
                == ClientAddress(address: "2001:db8::1", isLocal: false, viaTrustedProxy: true))
        #expect(Self.client("127.0.0.1", [("X-Forwarded-For", "127.0.0.1")]) == ClientAddress(address: "127.0.0.1", isLocal: true, viaTrustedProxy: true))
        // Forwarded wins over X-Forwarded-For; an element that is no address stops the walk at the hop before it.
        #expect(Self.client("127.0.0.1", [("Forwarded", "for=203.0.113.8"), ("X-Forwarded-For", "198.51.100.1")]).address == "203.0.113.8")
        #expect(Self.client("127.0.0.1", [("X-Forwarded-For", "203.0.113.9, unknown")]).address == "127.0.0.1")
        // From any other peer the headers are not believed, and the request is never this machine.
        #expect(Self.client("198.51.100.4", [("X-Forwarded-For", "127.0.0.1")])
                == ClientAddress(address: "198.51.100.4", isLocal: false, viaTrustedProxy: false))
        #expect(Self.client("::1", [("X-Real-IP", "127.0.0.1")]) == ClientAddress(address: "::1", isLocal: false, viaTrustedProxy: false))
        #expect(Self.client(nil, [("X-Forwarded-For", "203.0.113.1")]).isLocal == false)
        #expect(Self.client(nil, []).isLocal)
    }

    @Test func aTrustedProxyBlockIsNoWiderThanASlashEight() throws {
        #expect(ClientAddress.problem(trusting: try #require(IPRange("0.0.0.0/0"))) != nil)
        #expect(ClientAddress.problem(trusting: try #require(IPRange("10.0.0.0/7"))) != nil)
        #expect(ClientAddress.problem(trusting: try #require(IPRange("10.0.0.0/8"))) == nil)
        #expect(ClientAddress.problem(trusting: try #require(IPRange("::/0"))) != nil)
        #expect(ClientAddress.problem(trusting: try #require(IPRange("2001:db8::/31"))) != nil)
        #expect(ClientAddress.problem(trusting: try #require(IPRange("fd00::/32"))) == nil)
    }

    @Test func onlyPublicAddressesArePublic() {
        for address in ["127.0.0.2", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
                        "224.0.0.1", "255.255.255.255", "192.0.2.1", "::1", "::", "fe80::1", "fd00::1", "fc00::1", "ff02::1",
                        "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:7f00:1::", "2001:db8::1", "not an address"] {
            #expect(!PublicAddress.isPublic(address), "\(address)")
        }
        for address in ["93.184.216.34", "1.1.1.1", "172.32.0.1", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"] {
            #expect(PublicAddress.isPublic(address), "\(address)")
        }
        // Other spellings of loopback are resolved as the resolver reads them, then refused.
        let policy = AddressPolicy.publicOnly()
        for spelling in ["2130706433", "0x7f000001", "0177.0.0.1", "127.1", "localhost"] {
            #expect(AddressPolicy.resolve(spelling).allSatisfy { !policy.permits($0) }, "\(spelling)")
            #expect(!AddressPolicy.resolve(spelling).isEmpty, "\(spelling)")
        }
        #expect(AddressPolicy.publicOnly(alsoAllowing: [IPRange("10.1.2.0/24")].compactMap { $0 }).permits("10.1.2.9"))
        #expect(AddressPolicy.any.permits("127.0.0.1"))
    }

    @Test func theAccessLogRedactsEverySecretShape() {
        let token = "agg_0123abcd_" + String(repeating: "e", count: 64)
        let cases: [(String, String)] = [
            ("/feed.atom", "/feed.atom"),
            ("/feed.atom?per_page=50&source=ltk", "/feed.atom?per_page=50&source=ltk"),
            ("/feed.atom?token=\(token)", "/feed.atom?token=REDACTED"),
            ("/feed.atom?TOKEN=x&page=2", "/feed.atom?TOKEN=REDACTED&page=2"),
            ("/feed.atom?%74oken=x", "/feed.atom?%74oken=REDACTED"),
            ("/x?T=abc&s=feed", "/x?T=REDACTED&s=feed"),
            ("/accounts/ClientLogin?Email=ann&Passwd=hunter2", "/accounts/ClientLogin?Email=ann&Passwd=REDACTED"),
            ("/x?api_key=1&q=a", "/x?api_key=REDACTED&q=a"),
            ("/cards/\(token)/read", "/cards/REDACTED/read"),
            ("/cards/%61gg_1", "/cards/REDACTED"),
            ("/x?q=\(token)", "/x?q=REDACTED"),
        ]
        for (target, logged) in cases { #expect(AccessLine.redacted(target) == logged, "\(target)") }
    }

    @Test func aFormSendsABrowserBackToAPathOfThisServerOnly() {
        for good in ["/", "/?view=all", "/cards/ltk%3A1?at=2"] { #expect(SameServerPath.safe(good) == good) }
        for bad in ["//evil.example", "/\\evil.example", "https://evil.example", "/\tevil", "/ x", "/a\nb", "/a\u{7f}", "/a\u{200b}b", "", nil] {
            #expect(SameServerPath.safe(bad) == nil, "\(String(describing: bad))")
        }
    }

    /// Concurrent attempts cannot pass the count together; a right password gives its slot back.
    @Test func attemptsReserveTheirSlotBeforeTheCheck() async {
        let limits = SignInLimits()
        var tickets: [SignInLimits.Ticket] = []
        for _ in 0..<SignInLimits.concurrentChecks {
            guard case .check(let ticket) = await limits.admit(person: "ann", address: "a") else { Issue.record("refused"); return }
            tickets.append(ticket)
        }
        guard case .busy = await limits.admit(person: "ann", address: "a") else { Issue.record("a third check at once"); return }
        for ticket in tickets { await limits.finish(ticket, .failed) }
        for _ in SignInLimits.concurrentChecks..<SignInLimits.perPersonAndAddress {
            guard case .check(let ticket) = await limits.admit(person: "ann", address: "a") else { Issue.record("refused early"); return }
            await limits.finish(ticket, .failed)
        }
        guard case .refused(let wait) = await limits.admit(person: "ann", address: "a") else { Issue.record("not refused"); return }
        #expect(wait > 0 && wait <= 900)
        // Another address, and another person from the same address, are not refused.
        guard case .check(let other) = await limits.admit(person: "ann", address: "b") else { Issue.record("b refused"); return }
        await limits.finish(other, .succeeded)
        guard case .check(let bob) = await limits.admit(person: "bob", address: "a") else { Issue.record("bob refused"); return }
        await limits.finish(bob, .succeeded)
        #expect(await limits.slowdown(person: "ann") == .zero)
    }
}
