import FeedCore
import FeedState
import FixtureKit
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The reader's views one card per item (issue 64): on by default with a switch, every
/// other copy named under the card shown, marks that reach every copy, search that finds
/// an item once. Two feeds carry one story (one link with tracking parameters), two shops
/// one product at two prices, and two headlines that differ in a version stay apart.
@Suite struct SameItemServeTests {
    static let sources = [
        FixtureSourceEntry(id: "herald", plugin: "feed", path: "/feed/same-a.xml", route: "feed"),
        FixtureSourceEntry(id: "digest", plugin: "feed", path: "/feed/same-b.xml", route: "feed"),
        FixtureSourceEntry(id: "shop-a", plugin: "html", path: "/page/store/a.html", route: "page"),
        FixtureSourceEntry(id: "shop-b", plugin: "html", path: "/page/store/b.html", route: "page"),
    ]
    static let html = ReadingServeTests.html
    static let story = ["herald:urn:same:a:1", "digest:urn:same:b:1"]
    static let dishwasher = ["shop-a:Q45-A", "shop-b:4471"]

    /// The copy a page shows of `pair`, and the other one: whichever was first seen (the
    /// sources' first refreshes may fall in two seconds), so the test asks the page.
    static func shown(_ pair: [String], in ids: [String]) throws -> (shown: String, other: String) {
        let shown = pair.filter(ids.contains)
        try #require(shown.count == 1, "\(ids)")
        return (shown[0], pair.first { $0 != shown[0] } ?? "")
    }

    @Test func theReaderShowsEachItemOnceAndMarksReachEveryCopy() async throws {
        try await ServedInProcess.with(sources: Self.sources) { served in
            await served.clock.untilSleeping(4)
            let merged = try await served.get("/?view=all&sort=title", headers: Self.html)
            let ids = ReadingServeTests.ids(merged.text)
            #expect(ids.count == 4, "\(merged.text)")
            #expect(ids.contains("herald:urn:same:a:2") && ids.contains("digest:urn:same:b:2"))
            let story = try Self.shown(Self.story, in: ids)
            let dishwasher = try Self.shown(Self.dishwasher, in: ids)
            let otherSource = String(story.other.prefix { $0 != ":" })
            // (The owner may say two copies are not one item: a button after each.)
            #expect(merged.text.contains(#"<p class="also">Also in: <a href="/cards/\#(story.other)">\#(otherSource)</a> <form class="apart""#), "\(merged.text)")
            let offer = dishwasher.other == "shop-b:4471" ? "shop-b £649.00" : "shop-a £699.00"
            #expect(merged.text.contains(#"<p class="also">Also at: <a href="/cards/\#(dishwasher.other)">\#(offer)</a> <form class="apart""#))
            // The item's price is its best offer.
            #expect(merged.text.components(separatedBy: "<strong>£649.00</strong>").count == 2)
            #expect(merged.text.contains(#"<p class="copies">Each item once, with where else it is. <a href="/?view=all&amp;sort=title&amp;merge=off">Show every copy</a></p>"#))

            // The switch: every copy apart, kept by the filters' form.
            let apart = try await served.get("/?view=all&sort=title&merge=off", headers: Self.html)
            #expect(ReadingServeTests.ids(apart.text).count == 6)
            #expect(!apart.text.contains(#"class="also""#))
            #expect(apart.text.contains(#"<input type="hidden" name="merge" value="off">"#))
            #expect(apart.text.contains(#"Every copy apart. <a href="/?view=all&amp;sort=title">Show each item once</a>"#))
            let wrong = try await served.get("/?merge=maybe", headers: Self.html)
            #expect(wrong.status == .badRequest)
            #expect(wrong.text.contains(#"\"maybe\" is not on or off"#), "\(wrong.text)")

            // Reading the story reads both copies; starring the dishwasher stars both.
            let browser = try ReadingServeTests.Browser(try await served.get("/", headers: Self.html))
            let read = try await ReadingServeTests.post(served, "/cards/\(story.shown)/read", "token=\(browser.token)&return=%2F",
                                                        headers: browser.headers.merging([.accept: "application/json"]))
            #expect(read.text.hasPrefix(#"{"marked":2,"#), "\(read.text)")
            let unread = try await served.get("/?merge=off", headers: [.cookie: browser.cookie, .accept: "text/html"])
            #expect(Set(ReadingServeTests.ids(unread.text)).isDisjoint(with: Self.story))
            #expect(ReadingServeTests.ids(unread.text).count == 4)
            _ = try await ReadingServeTests.post(served, "/cards/\(dishwasher.shown)/star", "token=\(browser.token)&return=%2F", headers: browser.headers)
            let starred = try await served.get("/?view=starred&merge=off", headers: [.cookie: browser.cookie, .accept: "text/html"])
            #expect(Set(ReadingServeTests.ids(starred.text)) == Set(Self.dishwasher))
            let starredOnce = try await served.get("/?view=starred", headers: [.cookie: browser.cookie, .accept: "text/html"])
            #expect(ReadingServeTests.ids(starredOnce.text) == [dishwasher.shown])

            // Search finds the story once, or both copies with the switch off.
            let found = try await served.get("/search?q=harbour", headers: [.cookie: browser.cookie, .accept: "text/html"])
            #expect(ReadingServeTests.ids(found.text).count == 1)
            // A script's JSON Lines stay a line per card unless it asks.
            let json = try await served.get("/search?q=harbour&merge=on")
            #expect(json.text.split(separator: "\n").count == 1)
            #expect(json.text.contains(#""also":[{"id":"\#(story.other)""#), "\(json.text)")
            let both = try await served.get("/search?q=harbour")
            #expect(both.text.split(separator: "\n").count == 2)

            // The owner says the shops' cards are two things: from now on they are shown apart.
            #expect(merged.text.contains(#"<input type="hidden" name="ids" value="\#(dishwasher.shown)"><input type="hidden" name="ids" value="\#(dishwasher.other)"><button type="submit""#))
            let wrongIDs = try await ReadingServeTests.post(served, "/items/apart", "token=\(browser.token)&ids=\(dishwasher.shown)", headers: browser.headers)
            #expect(wrongIDs.status == .badRequest)
            let unknown = try await ReadingServeTests.post(served, "/items/apart", "token=\(browser.token)&ids=\(dishwasher.shown)&ids=shop-b:nope",
                                                           headers: browser.headers)
            #expect(unknown.status == .notFound)
            let apartNow = try await ReadingServeTests.post(served, "/items/apart",
                                                            "token=\(browser.token)&return=%2F%3Fview%3Dall&ids=\(dishwasher.shown)&ids=\(dishwasher.other)",
                                                            headers: browser.headers)
            #expect(apartNow.status == .seeOther && apartNow.header("location") == "/?view=all")
            let split = try await served.get("/?view=all&sort=title", headers: [.cookie: browser.cookie, .accept: "text/html"])
            #expect(ReadingServeTests.ids(split.text).count == 5)
            #expect(Set(Self.dishwasher).isSubset(of: ReadingServeTests.ids(split.text)))
        }
    }
}

private extension HTTPFields {
    func merging(_ other: HTTPFields) -> HTTPFields {
        var fields = self
        for field in other { fields[field.name] = field.value }
        return fields
    }
}
