@testable import FeedServer
@testable import ServeAccess
@testable import ServeHTTP
import Foundation
import Testing

/// `/cards/{id}` lookups are limited per client address, then per source (issue 39, item
/// 10): one client's run of unknown ids used to empty the source's bucket, and other
/// readers' real lookups got a 429.
@Suite struct DetailGuardTests {
    @Test func oneClientRunsOutOfItsOwnLookupsNotOfEveryonesLookups() async {
        let guardian = DetailGuard()
        let now = ContinuousClock.now
        // The hostile client: its 10 at once, then refused, however often it asks.
        for _ in 0 ..< 10 { #expect(await guardian.admit("shop", client: "203.0.113.9", now: now) == nil) }
        for _ in 0 ..< 1000 {
            #expect(await guardian.admit("shop", client: "203.0.113.9", now: now) == DetailGuard.Refusal(wait: .milliseconds(500), byClient: true))
        }
        // Another reader, at the same instant: the source still has 10 of its 20 for them.
        for _ in 0 ..< 10 { #expect(await guardian.admit("shop", client: "198.51.100.7", now: now) == nil) }
        // A third: the source's bucket is now empty; said so, not blamed on the client.
        #expect(await guardian.admit("shop", client: "192.0.2.1", now: now) == DetailGuard.Refusal(wait: .milliseconds(200), byClient: false))
        // Half a second later the hostile client has one lookup again.
        #expect(await guardian.admit("shop", client: "203.0.113.9", now: now.advanced(by: .milliseconds(500))) == nil)
    }
}
