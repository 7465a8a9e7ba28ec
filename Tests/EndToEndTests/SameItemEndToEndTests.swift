import FeedSourceTesting
import FixtureKit
import Foundation
import Testing

/// One item across sources through the built binary (issue 64): two feeds carrying one
/// story (one link with tracking parameters), two shops carrying one product at two
/// prices, and a near-miss pair of headlines kept apart; `aggregate apart` splits an item,
/// and the split holds through the next refresh.
@Suite(.serialized) struct SameItemEndToEndTests {
    static let sources = [
        FixtureSourceEntry(id: "herald", plugin: "feed", path: "/feed/same-a.xml", route: "feed"),
        FixtureSourceEntry(id: "digest", plugin: "feed", path: "/feed/same-b.xml", route: "feed"),
        FixtureSourceEntry(id: "shop-a", plugin: "html", path: "/page/store/a.html", route: "page"),
        FixtureSourceEntry(id: "shop-b", plugin: "html", path: "/page/store/b.html", route: "page"),
    ]

    static func lines(_ run: Binary.Run, base: URL) -> [String] {
        let base = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        return run.stdoutLines.map { $0.replacingOccurrences(of: base, with: "BASE") }
    }

    static let merged = [
        #"{"also":[{"id":"digest:urn:same:b:1","source":"digest","url":"https://herald.example/2026/11/harbour-works?utm_source=rss&utm_medium=feed"}],"id":"herald:urn:same:a:1","kind":"post","published":"2026-11-21T08:00:00Z","source":"herald","tags":[],"title":"Harbour works begin","url":"https://herald.example/2026/11/harbour-works","v":1}"#,
        #"{"id":"herald:urn:same:a:2","kind":"post","published":"2026-11-20T09:00:00Z","source":"herald","tags":[],"title":"iOS 18.1 released with Apple Intelligence features","url":"https://a.example/ios","v":1}"#,
        #"{"id":"digest:urn:same:b:2","kind":"post","published":"2026-11-21T09:00:00Z","source":"digest","tags":[],"title":"iOS 18.2 released with Apple Intelligence features","url":"https://b.example/ios","v":1}"#,
        #"{"also":[{"id":"shop-b:4471","price":{"amount":649,"currency":"GBP"},"source":"shop-b","url":"BASE/page/store/b.html"}],"details":{"gtin13":"5012345678900"},"id":"shop-a:Q45-A","kind":"product","offers":[{"id":"shop-a:Q45-A","price":{"amount":699,"currency":"GBP"},"source":"shop-a","url":"BASE/page/store/a.html"},{"id":"shop-b:4471","price":{"amount":649,"currency":"GBP"},"source":"shop-b","url":"BASE/page/store/b.html"}],"price":{"amount":649,"currency":"GBP"},"source":"shop-a","tags":[],"title":"Quiet 45 dishwasher","url":"BASE/page/store/a.html","v":1}"#,
    ]

    @Test func oneCardPerItemAndAPersonsWordHolds() async throws {
        try await FixtureWorld.withSession(sources: Self.sources) { session in
            // Off by default: every card as it was.
            let plain = try await session.run("--format", "jsonl")
            #expect(plain.status == 0 && plain.stdoutLines.count == 6, "\(plain.stderr)")
            let merged = try await session.run("--format", "jsonl", "--merge", "--sort", "title")
            #expect(merged.status == 0, "\(merged.stderr)")
            #expect(Self.lines(merged, base: session.base) == Self.merged)
            // The kept cards, a page made by the store's index with each card's copies found
            // by key: the same items.
            let stored = try await session.run("--format", "jsonl", "--merge", "--sort", "title", "--stored")
            #expect(stored.status == 0, "\(stored.stderr)")
            // (A kept card says when it was first and last seen: the rest is the same.)
            let seen = /"(first|last)_seen":"[^"]*",/
            #expect(Self.lines(stored, base: session.base).map { $0.replacing(seen, with: "") } == Self.merged)

            // For people: where else each item is, under it.
            let text = try await session.run("--format", "text", "--merge", "--sort", "title")
            #expect(text.stdoutLines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("also") } == [
                "also in: digest", "also at: shop-b £649.00",
            ], "\(text.stdout)")

            let item = try await session.run("item", "shop-b:4471")
            #expect(item.stdoutLines == [
                "one item of 2 cards, shown as shop-a:Q45-A:",
                "  shop-a:Q45-A  Quiet 45 dishwasher — £699.00: first seen",
                "  shop-b:4471  Quiet 45 dishwasher — £649.00: the same GTIN 05012345678900 with shop-a:Q45-A",
            ], "\(item.stdout)\(item.stderr)")

            // A person keeps the shops' cards apart; the next refresh does not join them again.
            let apart = try await session.run("apart", "shop-a:Q45-A", "shop-b:4471")
            #expect(apart.status == 0)
            #expect(apart.stderrLines == ["aggregate: shop-a:Q45-A and shop-b:4471 are kept apart from now on"])
            for arguments in [["--merge"], ["--merge", "--refresh"], ["--merge", "--stored"]] {
                let run = try await session.workspace.run(arguments: ["--format", "jsonl", "--sort", "title"] + arguments)
                #expect(run.stdoutLines.count == 5, "\(arguments): \(run.stdout)")
                #expect(run.stdoutLines.filter { $0.contains(#""also""#) }.count == 1)
            }
            // And a person's `same` joins what the rules keep apart.
            _ = try await session.run("same", "herald:urn:same:a:2", "digest:urn:same:b:2")
            let joined = try await session.run("--format", "jsonl", "--merge")
            #expect(joined.stdoutLines.count == 4)
            // A page of the kept cards finds the card a person joined, on another page.
            // (By title, a page a card: "iOS 18.1 released…" is the third of the six.)
            let page = try await session.run("--format", "jsonl", "--merge", "--stored", "--sort", "title", "--per-page", "1", "--page", "3")
            #expect(page.stdoutLines.count == 1 && page.stdoutLines[0].contains(#""id":"herald:urn:same:a:2""#), "\(page.stdout)\(page.stderr)")
            #expect(page.stdoutLines.first?.contains(#""also":[{"id":"digest:urn:same:b:2""#) == true, "\(page.stdout)")
            let why = try await session.run("item", "digest:urn:same:b:2")
            #expect(why.stdoutLines == [
                "one item of 2 cards, shown as herald:urn:same:a:2:",
                "  herald:urn:same:a:2  iOS 18.1 released with Apple Intelligence features: first seen",
                "  digest:urn:same:b:2  iOS 18.2 released with Apple Intelligence features: joined by a person (aggregate same) with herald:urn:same:a:2",
            ], "\(why.stdout)")
        }
    }

    /// A decision on the command line reaches a running `serve`'s reader: its kept page of
    /// the shops is made again within seconds, the two offers apart.
    @Test func aDecisionOnTheCommandLineReachesTheReader() async throws {
        try await ServeTests.withServe(sources: Array(Self.sources[2...])) { session, served in
            let merged = try await ServeTests.get(served.base + "/?view=all&sort=title")
            #expect(ReaderTests.cardIDs(merged.body).count == 1, "\(merged.body)")
            let apart = try await session.run("apart", "shop-a:Q45-A", "shop-b:4471")
            #expect(apart.status == 0, "\(apart.stderr)")
            var split = merged
            for _ in 0..<100 where ReaderTests.cardIDs(split.body).count == 1 {
                try await Task.sleep(for: .milliseconds(100))
                split = try await ServeTests.get(served.base + "/?view=all&sort=title")
            }
            #expect(Set(ReaderTests.cardIDs(split.body)) == ["shop-a:Q45-A", "shop-b:4471"], "not apart within 10 s: \(served.log)")
        }
    }

    @Test func mergeInSourcesYmlAndMistakenIds() async throws {
        try await FixtureWorld.withSession(sources: Self.sources, preamble: "merge: same-item\n") { session in
            let run = try await session.run("--format", "jsonl")
            #expect(run.stdoutLines.count == 4, "\(run.stderr)")
            let off = try await session.run("--format", "jsonl", "--no-merge")
            #expect(off.stdoutLines.count == 6)
            let unknown = try await session.run("apart", "shop-a:Q45-A", "shop-z:1")
            #expect(unknown.status == 2)
            #expect(unknown.stderrLines.first?.contains("shop-z:1") == true, "\(unknown.stderr)")
            let one = try await session.run("same", "shop-a:Q45-A")
            #expect(one.status == 2)
        }
    }

    /// Cheapest anywhere: a digest of items alerts once when any shop's offer falls below
    /// the threshold, and names that shop.
    @Test func aDigestWatchesTheItemAndNamesTheCheapestShop() async throws {
        let preamble = "merge: same-item\ndigests:\n  - name: cheap\n    format: text\n    when: [{price_below: 650}]\n"
        try await FixtureWorld.withSession(sources: Array(Self.sources[2...]), preamble: preamble) { session in
            let first = try await session.run("digest", "--name", "cheap", "--first-run", "report")
            #expect(first.status == 0, "\(first.stderr)")
            let alerts = first.stdoutLines.filter { $0.contains("Quiet 45") }
            #expect(alerts.count == 1, "\(first.stdout)")
            #expect(alerts.first?.contains("cheapest at shop-b") == true, "\(first.stdout)")
            let again = try await session.run("digest", "--name", "cheap")
            #expect(again.status == 0 && !again.stdout.contains("Quiet 45"), "\(again.stdout)")
        }
    }
}
