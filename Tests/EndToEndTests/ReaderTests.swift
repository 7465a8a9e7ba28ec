import FeedCore
import FeedSourceTesting
import FixtureKit
import Foundation
import Testing

/// The reader (issue 32): `serve`'s page of cards and each card's page, checked in the
/// HTML the built binary answers, and in a real browser (Tests/Browser/reader.py).
@Suite(.serialized) struct ReaderTests {
    static let html = [("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8")]

    /// The cards of one page, by the links they lead to (without the view they carry).
    static func cardIDs(_ page: String) -> [String] {
        page.components(separatedBy: #"<a class="card-link" href="/cards/"#).dropFirst().compactMap { $0.split(whereSeparator: { $0 == "\"" || $0 == "?" }).first.map(String.init) }
    }

    @Test func thePageListsTheCardsAndItsFormAndPagesWork() async throws {
        try await ServeTests.withServe(sources: FixtureWorld.only("cabify") + FixtureWorld.only("target")) { _, served in
            // The view of every card, in feed order (the default view is Unread, newest first).
            let page = try await ServeTests.get(served.base + "/?view=all&per_page=4")
            #expect(page.status == 200)
            #expect(page.headers.first(name: "content-type") == "text/html; charset=utf-8")
            #expect(Self.cardIDs(page.body) == ["cabify:VOUCHER", "target:0", "cabify:TSHIRT", "target:1"])
            // A sale price beside the regular price, struck through; a plain price alone.
            #expect(page.body.contains(#"<p class="price"><strong>$159.99</strong> <s aria-label="was $209.99">$209.99</s></p>"#))
            #expect(page.body.contains(#"<p class="price"><strong>€5.00</strong></p>"#))
            #expect(page.body.contains(#"<img src="https://appstorage.target.com/app-data/native-tha-images/1.jpg" alt="VIZIO D-Series 40&quot; Class 1080p Full-Array LED HD Smart TV" width="640" height="480" loading="lazy" decoding="async">"#))
            // A card without an image has none: no grey box for a text.
            #expect(!page.body.contains(#"alt="Cabify Voucher""#))
            #expect(page.body.contains(#"<a class="card-link" href="/cards/cabify:VOUCHER?view=all&amp;at=1">"# + "\n<h2>Cabify Voucher</h2></a>"))
            #expect(page.body.contains(#"<link rel="alternate" type="application/atom+xml" title="aggregate (Atom)" href="/feed.atom?per_page=4">"#) == false)
            #expect(page.body.contains(#"<link rel="alternate" type="application/atom+xml" title="aggregate (Atom)" href="/feed.atom">"#))
            #expect(page.body.contains(#"<a href="/?view=all&amp;per_page=4&amp;page=2" rel="next">Next</a>"#))
            #expect(page.body.contains(#"<span aria-current="page">1</span>"#))
            #expect(page.body.contains(#"<p class="count">Cards 1–4 of 23</p>"#))

            // The form as a browser sends it: empty fields mean "any".
            let narrowed = try await ServeTests.get(served.base + "/?view=all&source=cabify&kind=&q=&sort=price")
            #expect(narrowed.status == 200)
            #expect(Self.cardIDs(narrowed.body) == ["cabify:VOUCHER", "cabify:MUG", "cabify:TSHIRT"])
            #expect(narrowed.body.contains(#"<option value="cabify" selected>cabify</option>"#))
            #expect(narrowed.body.contains(#"href="/feed.atom?source=cabify&amp;sort=price""#))
            let searched = try await ServeTests.get(served.base + "/?view=all&q=mug")
            #expect(Self.cardIDs(searched.body) == ["cabify:MUG"])
            #expect(try await ServeTests.get(served.base + "/?view=all&page=2&per_page=20").body.contains(#"<span aria-current="page">2</span>"#))
            #expect(try await ServeTests.get(served.base + "/?sort=cheapest").status == 400)

            let css = try await ServeTests.get(served.base + "/reader.css")
            #expect(css.status == 200 && css.headers.first(name: "content-type") == "text/css; charset=utf-8")
            #expect(css.body.contains("prefers-color-scheme: dark"))
        }
    }

    @Test func aCardsPageShowsWhatItsSourceGives() async throws {
        try await ServeTests.withServe(sources: FixtureWorld.only("dishwashers") + FixtureWorld.only("ltk") + FixtureWorld.only("cabify")) { _, served in
            let dishwasher = try await ServeTests.get(served.base + "/cards/dishwashers:3294410", headers: Self.html)
            #expect(dishwasher.status == 200)
            #expect(dishwasher.headers.first(name: "content-type") == "text/html; charset=utf-8")
            #expect(dishwasher.body.contains("<h1>Neff S515T80D1G Fully Integrated Dishwasher</h1>") || dishwasher.body.contains("<h1>"))
            // Each detail by its shape, under its own name: the reader knows no source's field names.
            #expect(dishwasher.body.contains(#"<h2 id="detail-1">Gallery</h2><ul class="gallery"><li><a href="#))
            #expect(dishwasher.body.contains(#"<tr><th scope="row">Dimensions</th><td>H81.5 x W59.8 x D55cm</td></tr>"#))
            #expect(dishwasher.body.contains(#">Included services</h2><ul><li>2 year guarantee included</li></ul>"#))
            #expect(dishwasher.body.contains("<dt>Special offer</dt><dd>Claim £50 cashback (via redemption)</dd>"))
            #expect(dishwasher.body.contains(#">Product information</h2><p>"#))

            let post = try await ServeTests.get(served.base + "/cards/ltk:c70ee072-b8f8-11ec-a164-0242ac110004", headers: Self.html)
            #expect(post.body.contains(#"<h2 id="detail-1">Products</h2><ul class="products"><li><a href="https://rstyle.me/"#))
            #expect(post.body.contains(#"<p class="author"><img src="https://avatar-cdn.liketoknow.it/"#))
            #expect(post.body.contains("modernnest"))

            // A source without a detail endpoint: what the list knows, said so.
            let item = try await ServeTests.get(served.base + "/cards/cabify:MUG", headers: Self.html)
            #expect(item.body.contains("cabify has no detail page; this is what its list gives."))
            // JSON stays the default for other clients.
            let json = try await ServeTests.get(served.base + "/cards/cabify:MUG")
            #expect(json.headers.first(name: "content-type") == "application/json")
            #expect(json.body.hasPrefix(#"{"id":"cabify:MUG""#))
        }
    }

    /// Links from upstreams that are not web addresses never become an `href` or `src` (a
    /// `javascript:` link in LTK's products, a `json` source's extras, an `exec` author ran
    /// script on click), not in the reader and not in the served feeds; and every page
    /// carries a policy that runs no script but the reader's own file.
    @Test func linksThatAreNotWebAddressesAreLeftOutAndPagesRunNoScript() async throws {
        let card: [String: Any] = [
            "id": "1", "title": "Hostile links", "url": "https://site.example/post", "image": "https://site.example/post.jpg",
            "author": ["name": "Eve", "url": "JaVaScRiPt:alert(3)", "image": "vbscript:msgbox(4)"],
            "details": [
                "products": [["url": "javascript:alert(5)", "image": "data:text/html,x", "title": "Bad"],
                             ["url": "https://shop.example/ok", "image": "https://shop.example/ok.jpg", "title": "Fine"]],
                "gallery": ["javascript:alert(6)//x.jpg", "https://shop.example/a.jpg"],
                "hyperlink": "java\tscript:alert(7)",
            ],
        ]
        let line = String(decoding: try JSONSerialization.data(withJSONObject: card, options: [.sortedKeys]), as: UTF8.self)
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            try session.workspace.write("hostile.py", "print(\(String(reflecting: line)))\n")
            try session.workspace.write("Sources.yml", """
                sources:
                  - id: hostile
                    plugin: exec
                    options:
                      command: [python3, ./hostile.py]

                """)
            let served = try await ServeTests.Served.start(session)
            do {
                let page = try await ServeTests.get(served.base + "/cards/hostile:1", headers: Self.html)
                #expect(page.status == 200)
                // Every link and image is ours (`/…`) or a web address: text may mention
                // `javascript:` (it is escaped), no attribute may hold it.
                let attributes = page.body.matches(of: #/(?:href|src)="([^"]*)"/#).map { String($0.output.1) }
                #expect(attributes.count >= 8)
                #expect(attributes.filter { !($0.hasPrefix("/") || $0.hasPrefix("#") || $0.hasPrefix("https://") || $0.hasPrefix("http://")) } == [])
                #expect(page.body.contains(#"<a href="https://shop.example/ok"><img src="https://shop.example/ok.jpg""#))
                #expect(page.headers.first(name: "Content-Security-Policy")
                        == "default-src 'none'; img-src 'self' https: http:; media-src https: http:; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
                #expect(page.headers.first(name: "X-Content-Type-Options") == "nosniff")
                #expect(page.headers.first(name: "Referrer-Policy") == "same-origin")
                // Every card: opening its page above read it.
                let list = try await ServeTests.get(served.base + "/?view=all", headers: Self.html)
                #expect(list.headers.first(name: "Content-Security-Policy") != nil)
                // The one script is the reader's own file: none inline, none from elsewhere.
                #expect(list.body.matches(of: #/<script[^>]*>/#).map { String($0.output) } == [#"<script src="/reader.js" defer>"#])
                #expect(list.body.contains(#"<img src="https://site.example/post.jpg""#))
                for feed in ["/feed.json", "/feed.atom", "/feed.rss"] {
                    let answer = try await ServeTests.get(served.base + feed)
                    #expect(answer.status == 200)
                    #expect(!answer.body.lowercased().contains("script:"), "\(feed): \(answer.body)")
                    #expect(!answer.body.contains("data:"), "\(feed)")
                    #expect(answer.headers.first(name: "X-Content-Type-Options") == "nosniff")
                }
                let json = try await ServeTests.get(served.base + "/feed.json")
                #expect(json.body.contains(#""url":"https://shop.example/ok""#))
                #expect(json.body.contains(#""authors":[{"name":"Eve"}]"#))
            } catch {
                await served.stop()
                throw error
            }
            await served.stop()
        }
    }

    /// Chromium, its driver and Python's selenium and html5lib: installed by .ci/run.
    static func browserAvailable() async -> Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver") else { return false }
        let probe = try? await TestProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import selenium, html5lib"])
        return probe?.status == 0
    }

    @Test(.enabled("needs chromium, chromium-driver and python3 -m pip install selenium html5lib (.ci/run installs them)") {
        await browserAvailable()
    })
    func inARealBrowserAtThreeWidths() async throws {
        // Sixty feeds in three OPML folders (each of the recorded feeds again and again).
        let paths = ["/feed/blog.atom.xml", "/feed/news.rss.xml", "/feed/podcast.xml"]
        let folders = (0..<60).map { number in
            FixtureSourceEntry(id: "feed-\(number)", plugin: "feed", path: paths[number % 3], route: "feed",
                               extraYAML: "    options:\n      tags: [\"\(["News", "Tech", "Friends"][number / 20])\"]\n")
        }
        try await ServeTests.withServe(sources: FixtureWorld.sources.filter { ["target", "ltk", "users", "dishwashers", "cabify"].contains($0.id) }) { _, served in
          try await ServeTests.withServe(sources: folders) { _, grouped in
            let artifacts = ReadmeSections.root.appendingPathComponent(".build/browser-artifacts")
            let script = ReadmeSections.root.appendingPathComponent("Tests/Browser/reader.py")
            // Files, not a pipe: Chromium's helpers may outlive the script, holding its output.
            let run = try await TestProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, served.base, artifacts.path, grouped.base],
                                                 timeLimit: .seconds(600))
            let text = run.stdout + run.stderr
            print(text)
            #expect(run.status == 0, "\(text.split(separator: "\n").filter { $0.hasPrefix("FAIL") || $0.contains("Error") }.prefix(10).joined(separator: "\n"))")
            #expect(run.stdout.hasSuffix("all passed\n"))
          }
        }
    }
}
