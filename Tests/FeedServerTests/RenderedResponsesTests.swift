@testable import FeedServer
@testable import ServeAccess
@testable import ServeHTTP
import Foundation
import NIOCore
import Testing

/// The rendered-response cache holds its bound in bytes actually held, and keeps a new
/// entry in constant time however many it holds (issue 39, item 8: under 100,000
/// distinct query strings, eviction sorted every entry under the lock, hits took 40–80 ms,
/// and RSS went from 55 to 301 MB with a 64 MiB limit).
@Suite struct RenderedResponsesTests {
    /// A response like a small feed page: 8 KB of body, compressed.
    static func page(_ seed: Int) -> RenderedResponse {
        var text = ""
        for line in 0 ..< 100 { text += "<entry><title>Card \(seed)-\(line)</title><summary>Something to read about it</summary></entry>\n" }
        return RenderedResponse(body: Array(text.utf8), contentType: "application/atom+xml; charset=utf-8", lastModified: nil,
                                maxAge: 60, degraded: nil, versions: ["a": 0])
    }

    @Test func aHundredThousandDistinctQueriesStayWithinTheBoundInConstantTime() async {
        let limit = 16 << 20
        let cache = InMemoryRenderedResponses(limit: limit)
        let versions = SourceVersions()
        let template = Self.page(0)
        let clock = ContinuousClock()
        var lastTenThousand = clock.now
        for index in 0 ..< 100_000 {
            if index == 90_000 { lastTenThousand = clock.now }
            _ = await cache.response(for: "/feed.atom?q=\(index)", versions: versions) { template }
            if index % 10_000 == 0 {
                #expect(cache.bytes <= limit)
            }
        }
        let elapsed = clock.now - lastTenThousand
        #expect(cache.bytes <= limit)
        #expect(cache.count > 100)
        // Each entry is counted as at least its buffers' capacity: the bound is on memory.
        let footprint = InMemoryRenderedResponses.footprint(key: "/feed.atom?q=99999", response: template)
        #expect(footprint >= template.heldBytes)
        // Both encodings in one allocation: 8.5 KB and 361 bytes were 16 KiB each.
        #expect(template.heldBytes == 16_384)
        #expect(cache.count <= limit / footprint + 1)
        // New entries while the cache is full: no pass over every entry each time (sorting
        // them took 100 ms per entry at 25,000, minutes for these 10,000). Generous for a
        // loaded machine: about 1 ms each.
        #expect(elapsed < .seconds(10), "the last 10,000 insertions took \(elapsed)")
    }

    /// Moved softly (another process wrote the store): the kept response is answered at
    /// once while it is rendered again beside the request; bumped, the reader waits for a
    /// new one.
    @Test func aResponseMovedSoftlyIsAnsweredWhileItIsRenderedAgain() async throws {
        let cache = InMemoryRenderedResponses()
        let versions = SourceVersions()
        @Sendable func page(_ text: String) -> RenderedResponse {
            RenderedResponse(body: Array(text.utf8), contentType: "text/plain", lastModified: nil, maxAge: nil, degraded: nil,
                             versions: versions.snapshot(["a"]))
        }
        _ = await cache.response(for: "/k", versions: versions) { page("one") }
        versions.moveSoftly("a")
        #expect(cache.kept("/k", versions: versions) == nil)
        // The rendering beside the reader waits until it is let go.
        let (letGo, release) = AsyncStream<Void>.makeStream()
        let (stale, hit) = await cache.response(for: "/k", versions: versions) {
            for await _ in letGo { break }
            return page("two")
        }
        #expect(String(buffer: stale.body) == "one")
        #expect(hit)
        // Meanwhile the kept answer (the connection's fast path) is the one before.
        #expect(cache.kept("/k", versions: versions).map { String(buffer: $0.body) } == "one")
        release.yield()
        // What was rendered beside it is kept: a later reader has it.
        var next = stale
        for _ in 0..<500 where String(buffer: next.body) == "one" {
            try await Task.sleep(for: .milliseconds(10))
            next = await cache.response(for: "/k", versions: versions) { page("three") }.0
        }
        #expect(String(buffer: next.body) == "two")
        versions.bump("a")
        let (fresh, freshHit) = await cache.response(for: "/k", versions: versions) { page("four") }
        #expect(String(buffer: fresh.body) == "four")
        #expect(!freshHit)
    }

    /// Second chance: an entry read since the hand last passed survives the next eviction.
    @Test func aRecentlyReadEntrySurvivesEviction() async {
        let template = Self.page(0)
        let size = InMemoryRenderedResponses.footprint(key: "/k0", response: template)
        let cache = InMemoryRenderedResponses(limit: size * 4 + size / 2)
        let versions = SourceVersions()
        for index in 0 ..< 4 { _ = await cache.response(for: "/k\(index)", versions: versions) { template } }
        #expect(cache.count == 4)
        #expect(cache.kept("/k0", versions: versions) != nil)
        _ = await cache.response(for: "/k4", versions: versions) { template }
        #expect(cache.count == 4)
        #expect(cache.kept("/k0", versions: versions) != nil)
        #expect(cache.kept("/k1", versions: versions) == nil)
        // A source's change retires what was built from it, and nothing else.
        versions.bump("a")
        #expect(cache.kept("/k0", versions: versions) == nil)
        cache.invalidate(source: "a")
        #expect(cache.count == 0 && cache.bytes == 0)
    }
}
