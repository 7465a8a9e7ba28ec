import FeedCore
import FeedState
import FeedSourceTesting
import FixtureServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The reader's marks and search over HTTP (issue 42): views, forms that POST and come
/// back, their cross-site guard, a card's page marking it read, `/search`.
@Suite struct ReadingServeTests {
    static let html: HTTPFields = [.accept: "text/html"]

    /// A person's browser: the session cookie the first page set, and the forms' token.
    struct Browser {
        var cookie: String
        var token: String

        init(_ page: TestResponse) throws {
            let setCookie = try #require(page.header("set-cookie"))
            cookie = String(setCookie.prefix { $0 != ";" })
            let marker = #"name="token" value=""#
            let start = try #require(page.text.range(of: marker)).upperBound
            token = String(page.text[start...].prefix { $0 != "\"" })
        }

        var headers: HTTPFields {
            [.cookie: cookie, .accept: "text/html", .contentType: "application/x-www-form-urlencoded"]
        }
    }

    static func post(_ served: ServedInProcess, _ path: String, _ form: String, headers: HTTPFields) async throws -> TestResponse {
        try await served.client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: form))
    }

    /// The ids of a page's cards, in order.
    static func ids(_ page: String) -> [String] {
        page.components(separatedBy: #"data-id=""#).dropFirst().map { String($0.prefix { $0 != "\"" }) }
    }

    /// The Unread count of the views' list.
    static func unread(_ page: String) -> Int? {
        guard let range = page.range(of: #"<span class="count" data-unread>"#) else { return nil }
        return Int(page[range.upperBound...].prefix { $0.isNumber })
    }

    @Test func sourcesAreShownByTheirNames() async throws {
        var cabify = FixtureWorld.only("cabify")
        cabify[0].extraYAML += "    name: \"Cabify <shop>\"\n"
        try await ServedInProcess.with(sources: cabify) { served in
            await served.clock.untilSleeping(1)
            let page = try await served.get("/?view=unread&source=cabify", headers: Self.html)
            #expect(page.text.contains("<h1>Unread from Cabify &lt;shop&gt;</h1>"), "\(page.text)")
            #expect(page.text.contains(#"<span class="source">Cabify &lt;shop&gt;</span>"#))
            #expect(page.text.contains(#"<option value="cabify" selected>Cabify &lt;shop&gt;</option>"#))
            #expect(page.text.contains(#"aria-current="page">Cabify &lt;shop&gt; <span class="count">3</span>"#))
            let card = try await served.get("/cards/cabify:MUG", headers: Self.html)
            #expect(card.text.contains(#"<span class="source">Cabify &lt;shop&gt;</span>"#))
            let listing = try await served.get("/sources")
            #expect(listing.text.contains(#""id":"cabify","name":"Cabify <shop>""#), "\(listing.text)")
        }
    }

    /// The `href`s of a page's previous/next links on a card's page, `rel` first.
    static func neighbours(_ page: String) -> [String] {
        page.components(separatedBy: "<a href=\"").dropFirst().compactMap { rest -> String? in
            let href = String(rest.prefix { $0 != "\"" })
            guard let rel = rest.dropFirst(href.count).split(separator: ">").first, rel.contains("rel=\"prev\"") || rel.contains("rel=\"next\"") else { return nil }
            return (rel.contains("prev") ? "prev " : "next ") + href.replacingOccurrences(of: "&amp;", with: "&")
        }
    }

    @Test func aCardsPageLinksItsNeighboursInItsView() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify")) { served in
            await served.clock.untilSleeping(1)
            let list = try await served.get("/?source=cabify&sort=title", headers: Self.html)
            #expect(Self.ids(list.text) == ["cabify:MUG", "cabify:TSHIRT", "cabify:VOUCHER"])
            #expect(list.text.contains(#"<a class="card-link" href="/cards/cabify:TSHIRT?source=cabify&amp;sort=title&amp;at=2">"#))
            // Opening the second reads it, so in Unread the third takes its place (2).
            let second = try await served.get("/cards/cabify:TSHIRT?source=cabify&sort=title&at=2", headers: Self.html)
            #expect(Self.neighbours(second.text) == ["prev /cards/cabify:MUG?source=cabify&sort=title&at=1",
                                                     "next /cards/cabify:VOUCHER?source=cabify&sort=title&at=2"])
            #expect(second.text.contains(#"<p class="back"><a href="/?source=cabify&amp;sort=title">Back to the list</a></p>"#))
            let third = try await served.get("/cards/cabify:VOUCHER?source=cabify&sort=title&at=2", headers: Self.html)
            #expect(Self.neighbours(third.text) == ["prev /cards/cabify:MUG?source=cabify&sort=title&at=1"])
            // In All nothing leaves: the next is one further on.
            let all = try await served.get("/cards/cabify:MUG?view=all&sort=title&at=1", headers: Self.html)
            #expect(Self.neighbours(all.text) == ["next /cards/cabify:TSHIRT?view=all&sort=title&at=2"])
            // Without a view, no neighbours; a nonsense place is ignored.
            #expect(Self.neighbours(try await served.get("/cards/cabify:MUG", headers: Self.html).text) == [])
            #expect(try await served.get("/cards/cabify:MUG?at=-4&view=nope", headers: Self.html).status == .ok)
        }
    }

    @Test func markingReadAndStarringMoveCardsBetweenViews() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify")) { served in
            await served.clock.untilSleeping(1)
            let first = try await served.get("/", headers: Self.html)
            #expect(first.status == .ok)
            #expect(first.header("cache-control") == "no-store")
            #expect(first.text.contains("<h1>Unread</h1>"))
            #expect(Self.ids(first.text).sorted() == ["cabify:MUG", "cabify:TSHIRT", "cabify:VOUCHER"])
            #expect(Self.unread(first.text) == 3)
            let browser = try Browser(first)

            let read = try await Self.post(served, "/cards/cabify:MUG/read", "token=\(browser.token)&return=%2F%3Fview%3Dunread", headers: browser.headers)
            #expect(read.status == .seeOther)
            #expect(read.header("location") == "/?view=unread")
            let unread = try await served.get("/", headers: [.cookie: browser.cookie, .accept: "text/html"])
            #expect(Self.ids(unread.text).sorted() == ["cabify:TSHIRT", "cabify:VOUCHER"])
            #expect(Self.unread(unread.text) == 2)

            let star = try await Self.post(served, "/cards/cabify:TSHIRT/star", "token=\(browser.token)&return=https%3A%2F%2Fevil.example%2F",
                                           headers: browser.headers)
            // Back to a page of this server only.
            #expect(star.header("location") == "/")
            let starred = try await served.get("/?view=starred", headers: [.cookie: browser.cookie, .accept: "text/html"])
            #expect(Self.ids(starred.text) == ["cabify:TSHIRT"])
            #expect(starred.text.contains(#"<li class="card starred" data-id="cabify:TSHIRT">"#))

            // The script's way: JSON, with the unread count.
            var json = browser.headers
            json[.accept] = "application/json"
            let many = try await Self.post(served, "/read", "token=\(browser.token)&ids=cabify:TSHIRT&ids=cabify:VOUCHER&ids=cabify:NOPE", headers: json)
            #expect(many.text == #"{"marked":2,"unread":0}"# + "\n")
            let none = try await served.get("/", headers: [.cookie: browser.cookie, .accept: "text/html"])
            #expect(Self.ids(none.text).isEmpty)
            #expect(none.text.contains("Nothing unread."))
        }
    }

    /// A person's page is rendered once and kept while nothing it shows moves: each
    /// browser gets it with its own session's token (which its forms are taken with);
    /// a mark written elsewhere (`aggregate mark`, another replica) renders it again.
    @Test func aPersonsPageIsKeptWithEachBrowsersTokenUntilTheirMarksMove() async throws {
        let state = EngineState.inMemory()
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), metrics: true, state: state) { served in
            await served.clock.untilSleeping(1)
            func cache() async throws -> [String] {
                try await served.get("/metrics").text.split(separator: "\n").filter { $0.hasPrefix("aggregate_response_cache_total") }.map(String.init).sorted()
            }
            // A kept page is kept within its minute (it says "3 minutes ago"): the counts
            // below hold when no minute turned between the requests they count.
            func minute() -> Int { Int(Date().timeIntervalSince1970 / 60) }
            let firstMinute = minute()
            let ann = try Browser(try await served.get("/", headers: Self.html))
            let bobPage = try await served.get("/", headers: Self.html)
            let bob = try Browser(bobPage)
            #expect(ann.cookie != bob.cookie && ann.token != bob.token)
            #expect(bobPage.header("cache-control") == "no-store")
            #expect(!bobPage.text.contains(ann.token))
            #expect(Self.ids(bobPage.text).sorted() == ["cabify:MUG", "cabify:TSHIRT", "cabify:VOUCHER"])
            let sameMinute = minute() == firstMinute
            if sameMinute {
                #expect(try await cache() == [#"aggregate_response_cache_total{result="hit"} 1"#, #"aggregate_response_cache_total{result="miss"} 1"#])
            }

            // Marked read by another process: the page is rendered again, without the card.
            #expect(try await state.marks.mark(["cabify:MUG"], .read, at: Date()) == ["cabify:MUG"])
            let after = try await served.get("/", headers: [.cookie: bob.cookie, .accept: "text/html"])
            #expect(Self.ids(after.text).sorted() == ["cabify:TSHIRT", "cabify:VOUCHER"])
            #expect(Self.unread(after.text) == 2)
            if sameMinute, minute() == firstMinute {
                #expect(try await cache() == [#"aggregate_response_cache_total{result="hit"} 1"#, #"aggregate_response_cache_total{result="miss"} 2"#])
            }

            // Bob's token from the kept page is his session's: his form is taken.
            let read = try await Self.post(served, "/cards/cabify:TSHIRT/read", "token=\(bob.token)&return=%2F", headers: bob.headers)
            #expect(read.status == .seeOther)
            let again = try await served.get("/", headers: [.cookie: ann.cookie, .accept: "text/html"])
            #expect(Self.ids(again.text) == ["cabify:VOUCHER"])
            #expect(again.text.contains(ann.token) && !again.text.contains(bob.token))
        }
    }

    @Test func aPostFromAnotherSiteOrWithoutTheTokenChangesNothing() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify")) { served in
            await served.clock.untilSleeping(1)
            let browser = try Browser(try await served.get("/", headers: Self.html))
            var crossOrigin = browser.headers
            crossOrigin[.origin] = "http://evil.example"
            var crossSite = browser.headers
            crossSite[HTTPField.Name("Sec-Fetch-Site")!] = "cross-site"
            var noCookie = browser.headers
            noCookie[.cookie] = nil
            let refusals: [(HTTPFields, String, String)] = [
                (crossOrigin, "token=\(browser.token)", "a request from another origin (http://evil.example) changes nothing here"),
                (crossSite, "token=\(browser.token)", "a request from another site (Sec-Fetch-Site: cross-site) changes nothing here"),
                (browser.headers, "token=0000", "the form's token is missing or not this session's: reload the page and try again"),
                (noCookie, "token=\(browser.token)", "the form's token is missing or not this session's: reload the page and try again"),
            ]
            for (headers, form, detail) in refusals {
                let refused = try await Self.post(served, "/cards/cabify:MUG/read", form, headers: headers)
                #expect(refused.status == .forbidden)
                #expect(refused.text.contains(#""detail":"\#(detail)""#), "\(refused.text)")
            }
            let page = try await served.get("/", headers: [.cookie: browser.cookie, .accept: "text/html"])
            #expect(Self.unread(page.text) == 3)
            // From the page itself (same-origin), it is taken.
            var sameSite = browser.headers
            sameSite[HTTPField.Name("Sec-Fetch-Site")!] = "same-origin"
            #expect(try await Self.post(served, "/cards/cabify:MUG/read", "token=\(browser.token)", headers: sameSite).status == .seeOther)
        }
    }

    /// Opening a card's page reads it; "mark everything as read up to now" leaves what a
    /// refresh added after the page was made unread.
    @Test func openingACardReadsItAndEverythingUpToNowLeavesLaterCardsUnread() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), extra: ["cabify": "    refresh: 5\n"]) { served in
            await served.clock.untilSleeping(1)
            let page = try await served.get("/", headers: Self.html)
            let browser = try Browser(page)
            let opened = try await served.get("/cards/cabify:MUG", headers: [.cookie: browser.cookie, .accept: "text/html"])
            #expect(opened.status == .ok)
            #expect(opened.text.contains(">Mark unread</button>"))
            #expect(Self.unread(try await served.get("/", headers: Self.html).text) == 2)

            let marker = #"name="before" value=""#
            let start = try #require(page.text.range(of: marker)).upperBound
            let before = String(page.text[start...].prefix { $0 != "\"" })
            served.fixture.control.edit("cabify", .add(list: "products", item: .object(["code": "HOODIE", "name": "Hoodie", "price": 30])))
            await served.refresh(after: 5, sources: 1)
            // The form as the page has it: the time, and the page's own cards.
            let ids = Self.ids(page.text).map { "&ids=\($0)" }.joined()
            let all = try await Self.post(served, "/read", "token=\(browser.token)&before=\(before)\(ids)", headers: browser.headers)
            #expect(all.status == .seeOther)
            let after = try await served.get("/", headers: [.cookie: browser.cookie, .accept: "text/html"])
            #expect(Self.ids(after.text) == ["cabify:HOODIE"])
        }
    }

    @Test func searchFindsKeptCardsAsLinesAndAsAPageWithTheWordsMarked() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify")) { served in
            await served.clock.untilSleeping(1)
            let lines = try await served.get("/search?q=coffee+mug")
            #expect(lines.status == .ok)
            #expect(lines.header("content-type") == "application/jsonl; charset=utf-8")
            #expect(StoreBackedServeTests.ids(lines.text) == ["cabify:MUG"])
            let page = try await served.get("/search?q=%22coffee+mug%22", headers: Self.html)
            #expect(page.text.contains("<h1>Search: &quot;coffee mug&quot;</h1>"))
            #expect(page.text.contains("<h2>Cabify <mark>Coffee</mark> <mark>Mug</mark></h2>"))
            let bad = try await served.get("/search?q=kind:gadget")
            #expect(bad.status == .badRequest)
            #expect(bad.text.contains("kind:gadget is not a kind; kinds are deal, product, post, person, item"))
        }
    }
}

extension ReadingServeTests {
    static func mug(_ price: Decimal) -> DataEdit {
        .set(list: "products", key: "code", match: "MUG", field: "price", value: .number(price))
    }

    /// A product's page: its dates, its history as a table, and a price chart whose points
    /// are the prices the history recorded; a card gone upstream still has its page.
    @Test func aProductsPageShowsItsHistoryAndAChartOfItsPrice() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), extra: ["cabify": "    refresh: 5\n"]) { served in
            await served.clock.untilSleeping(1)
            served.fixture.control.edit("cabify", Self.mug(6))
            await served.refresh(after: 5, sources: 1)
            served.fixture.control.edit("cabify", Self.mug(9), StoreBackedServeTests.noVoucher)
            await served.refresh(after: 5, sources: 1)

            let page = try await served.get("/cards/cabify:MUG", headers: Self.html).text
            #expect(page.contains(#"<p class="seen">First seen "#))
            let rows = page.matches(of: #/<tr data-at="[^"]+" data-price="([^"]+)">/#).map { String($0.output.1) }
            #expect(rows == ["9", "6"])
            #expect(page.contains("<td>Price</td><td>€6.00</td><td>€9.00</td>"))
            #expect(page.contains("<td>Price</td><td>€7.50</td><td>€6.00</td>"))
            // The points: the first price, then each row's, oldest first.
            let points = page.matches(of: #/<circle class="point[^"]*" cx="[^"]+" cy="[^"]+" r="5" data-at="[^"]+" data-price="([^"]+)">/#)
                .map { String($0.output.1) }
            #expect(points == ["7.5", "6", "9"])
            #expect(page.contains(#"<circle class="point lowest""#) && page.contains(#"<circle class="point current highest""#))
            #expect(page.contains("<desc id=\"chart-desc\">Now €9.00; lowest €6.00 on "))

            // Gone upstream, kept: the page says since when.
            let gone = try await served.get("/cards/cabify:VOUCHER", headers: Self.html)
            #expect(gone.status == .ok)
            #expect(gone.text.contains("; gone from cabify since "))
        }
    }
}

extension ReadingServeTests {
    /// A post's page shows its content as HTML the allow-list keeps, and a podcast's
    /// episode gets a player.
    @Test func aPostsPageShowsItsContentAndAPlayerForItsEpisode() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.enabled("feed-podcast")) { served in
            await served.clock.untilSleeping(1)
            let page = try await served.get("/cards/feed-podcast:small-batch-112", headers: Self.html).text
            #expect(page.contains(#"<div class="content"><p>Ada Brennan on keeping a 1920s press running, and why she still sets type by hand.</p><p>Links: <a href="https://example.org/press" rel="noopener noreferrer nofollow">the press</a></p></div>"#))
            #expect(page.contains(#"<audio controls preload="none" src="https://cdn.podcast.example.net/episodes/112.mp3"></audio>"#))
            #expect(!page.contains("&lt;p&gt;"))
            // The list says the episode has audio.
            let list = try await served.get("/?view=all", headers: Self.html).text
            #expect(list.contains(#"<span class="media">audio</span>"#))
        }
    }

    /// A post whose body holds its picture shows it once, where the post puts it; a post
    /// whose picture is not in its body shows it above.
    @Test func aPostsPictureIsShownOnce() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.enabled("feed-blog")) { served in
            await served.clock.untilSleeping(1)
            // The id's slashes escaped, as the reader's links have them.
            let inBody = try await served.get("/cards/feed-blog:tag:blog.example.org,2026:posts%2Fincremental-builds-measured", headers: Self.html).text
            #expect(inBody.components(separatedBy: "https://blog.example.org/img/incremental-histogram.png").count == 2)
            #expect(!inBody.contains(#"<img class="hero""#))
            #expect(inBody.contains(#"<div class="content"><p><img src="https://blog.example.org/img/incremental-histogram.png" alt="Histogram">"#))
            let enclosed = try await served.get("/cards/feed-blog:tag:blog.example.org,2026:posts%2Fflaky-tests-year", headers: Self.html).text
            #expect(enclosed.contains(#"<img class="hero" src="https://blog.example.org/img/flaky-year.png""#))
        }
    }
}
