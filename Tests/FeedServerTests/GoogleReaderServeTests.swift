@testable import FeedServer
@testable import ServeAccess
@testable import ServeHTTP
import FeedSourceTesting
import FeedState
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The Google Reader API (issue 43) as apps call it: ClientLogin, subscriptions, unread
/// counts, streams paged by continuation, items by either id form, edit-tag and
/// mark-all-as-read, each person's own.
@Suite struct GoogleReaderServeTests {
    static let api = "/api/greader/reader/api/0"

    struct App {
        let served: ServedInProcess
        let auth: String

        func get(_ path: String) async throws -> TestResponse {
            try await served.get(path, headers: [.authorization: "GoogleLogin auth=\(auth)"])
        }

        func post(_ path: String, _ form: String) async throws -> TestResponse {
            try await served.client.execute(uri: path, method: .post,
                                            headers: [.authorization: "GoogleLogin auth=\(auth)", .contentType: "application/x-www-form-urlencoded"],
                                            body: ByteBuffer(string: form))
        }

        func json(_ path: String) async throws -> [String: Any] {
            let answer = try await get(path)
            #expect(answer.status == .ok, "\(path): \(answer.text)")
            return try #require(try JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? [String: Any])
        }

        /// Each stream's unread count.
        func unread() async throws -> [String: Int] {
            let rows = try #require(try await json(GoogleReaderServeTests.api + "/unread-count?output=json")["unreadcounts"] as? [[String: Any]])
            return Dictionary(uniqueKeysWithValues: rows.compactMap { row in (row["id"] as? String).map { ($0, row["count"] as? Int ?? -1) } })
        }

        /// The titles of a stream's items and its continuation.
        func stream(_ query: String) async throws -> (ids: [String], titles: [String], categories: [[String]], continuation: String?) {
            let page = try await json(GoogleReaderServeTests.api + "/stream/contents/" + query)
            let items = try #require(page["items"] as? [[String: Any]])
            return (items.compactMap { $0["id"] as? String }, items.compactMap { $0["title"] as? String },
                    items.map { $0["categories"] as? [String] ?? [] }, page["continuation"] as? String)
        }
    }

    static func signIn(_ served: ServedInProcess, _ name: String, _ password: String, userAgent: String? = nil, form: String = "") async throws -> App {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let userAgent { headers[.userAgent] = userAgent }
        let answer = try await served.client.execute(uri: "/api/greader/accounts/ClientLogin", method: .post, headers: headers,
                                                     body: ByteBuffer(string: "Email=\(name)&Passwd=\(password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" + form))
        #expect(answer.status == .ok, "\(answer.text)")
        let lines = answer.text.split(separator: "\n")
        let auth = try #require(lines.first { $0.hasPrefix("Auth=") }).dropFirst(5)
        #expect(lines.count == 3 && lines[0] == "SID=\(auth)")
        return App(served: served, auth: String(auth))
    }

    /// A base address typed with a trailing slash (issue 62): clients append
    /// `/reader/api/0/…`, so the path has `//`; a card without a link of its own links to
    /// its page here. Over a socket: the paths are read before the router.
    @Test func aTrailingSlashAndALinklessCardAreAnsweredAsApps() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), overSocket: true) { served in
            await served.clock.untilSleeping(1)
            let list = try await served.get("/api/greader//reader/api/0/subscription/list")
            #expect(list.status == .ok && list.text.contains(#""id":"feed/cabify""#), "\(list.text)")
            let answer = try await served.get("/api/greader///reader/api/0/stream/contents/feed/cabify?n=5")
            #expect(answer.status == .ok)
            let page = try #require(try JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? [String: Any])
            let items = try #require(page["items"] as? [[String: Any]])
            let mug = try #require(items.first { $0["title"] as? String == "Cabify Coffee Mug" })
            let canonical = try #require(mug["canonical"] as? [[String: Any]])
            let href = try #require(canonical.first?["href"] as? String)
            #expect(href.hasPrefix("http://") && href.hasSuffix("/cards/cabify:MUG"), "\(href)")
            #expect((mug["alternate"] as? [[String: Any]])?.first?["href"] as? String == href)
        }
    }

    /// A podcast's episodes reach apps with their files (issue 62): `enclosure` in the JSON
    /// items as FreshRSS gives it, `<link rel="enclosure">` in the API's Atom streams
    /// (newsboat's FeedHQ mode, podboat); a card without one has no `enclosure` key.
    @Test func enclosuresReachAppsInJSONAndAtom() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.enabled("feed-podcast") + FixtureWorld.only("cabify")) { served in
            await served.clock.untilSleeping(2)
            let answer = try await served.get("/api/greader/reader/api/0/stream/contents/feed/feed-podcast?n=1")
            let page = try #require(try JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? [String: Any])
            let item = try #require((page["items"] as? [[String: Any]])?.first)
            let files = try #require(item["enclosure"] as? [[String: Any]])
            #expect(files.count == 1)
            #expect(files.first?["href"] as? String == "https://cdn.podcast.example.net/episodes/112.mp3")
            #expect(files.first?["type"] as? String == "audio/mpeg")
            #expect(files.first?["length"] as? Int == 48_210_934)
            let shop = try await served.get("/api/greader/reader/api/0/stream/contents/feed/cabify?n=1")
            #expect(!shop.text.contains("enclosure"))
            let atom = try await served.get("/api/greader/reader/atom/feed/feed-podcast?n=1")
            #expect(atom.text.contains(#"<link rel="enclosure" href="https://cdn.podcast.example.net/episodes/112.mp3" type="audio/mpeg" length="48210934"/>"#),
                    "\(atom.text)")
        }
    }

    /// Stream filters are applied inside the query (issue 62): every page holds `n` items
    /// until the stream ends, the pages together hold each unread item once, and the last
    /// page has no continuation; `ot`/`nt` compare when the card was first recorded.
    @Test func filteredPagesAreFullAndTheLastHasNoContinuation() async throws {
        let (state, _) = try await PeopleServeTests.people()
        try await ServedInProcess.with(sources: FixtureWorld.sources.filter { ["cabify", "users", "dishwashers"].contains($0.id) },
                                       state: state, access: PeopleServeTests.accounts()) { served in
            await served.clock.untilSleeping(3)
            let ann = try await Self.signIn(served, "ann", "ann's password")
            let all = try await ann.stream("user/-/state/com.google/reading-list?n=10000")
            #expect(all.continuation == nil)
            #expect(all.ids.count == 35)
            // Every third item read: the stream of the unread ones has gaps in the store's order.
            let read = all.ids.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
            #expect(try await ann.post(Self.api + "/edit-tag", "a=user/-/state/com.google/read" + read.map { "&i=\($0)" }.joined()).text == "OK")
            // And every fourth starred: a second filter, which the store's view does not hold.
            let starred = all.ids.enumerated().filter { $0.offset % 4 == 1 }.map(\.element)
            #expect(try await ann.post(Self.api + "/edit-tag", "a=user/-/state/com.google/starred" + starred.map { "&i=\($0)" }.joined()).text == "OK")
            var pages: [[String]] = []
            var continuation: String? = ""
            while let next = continuation, pages.count < 20 {
                let page = try await ann.stream("user/-/state/com.google/reading-list?n=5&xt=user/-/state/com.google/read&xt=user/-/state/com.google/starred"
                                                + (next.isEmpty ? "" : "&c=\(next)"))
                pages.append(page.ids)
                continuation = page.continuation
            }
            let unread = all.ids.filter { !read.contains($0) && !starred.contains($0) }
            #expect(pages.flatMap { $0 } == unread)
            #expect(pages.dropLast().allSatisfy { $0.count == 5 })
            #expect(pages.count == (unread.count + 4) / 5)
            // Nothing was first recorded after now; everything before.
            let now = Int(Date().timeIntervalSince1970) + 5
            let later = try await ann.stream("user/-/state/com.google/reading-list?ot=\(now)")
            #expect(later.ids.isEmpty && later.continuation == nil)
            #expect(try await ann.stream("user/-/state/com.google/reading-list?n=100&nt=\(now)").ids == all.ids)
        }
    }

    @Test func slashesAfterTheAPIsPrefixAreReadAsOne() {
        #expect(GoogleReaderPaths.normalized("/api/greader//reader/api/0/stream/contents/feed/https://x.org//a?c=1//2")
                == "/api/greader/reader/api/0/stream/contents/feed/https://x.org/a?c=1//2")
        #expect(GoogleReaderPaths.normalized("/api/greader/reader/api/0/unread-count") == nil)
        #expect(GoogleReaderPaths.normalized("/feed.atom//x") == nil)
        #expect(GoogleReaderPaths.normalized("/api/greader/reader/api/0/x?q=a//b") == nil)
    }

    /// Writes as apps send them (issue 62): ids in every form in one body (signed decimal,
    /// the long form padded or not, bare hex), state tags this server keeps no mark for, and
    /// any `T` or none: each answered `OK`, each known id marked once.
    @Test func editTagTakesEveryIdFormAndIgnoresTagsItDoesNotKeep() async throws {
        let (state, _) = try await PeopleServeTests.people()
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), state: state, access: PeopleServeTests.accounts()) { served in
            await served.clock.untilSleeping(1)
            let ann = try await Self.signIn(served, "ann", "ann's password")
            let ids = try await ann.stream("user/-/state/com.google/reading-list?n=3").ids
            #expect(ids.count == 3)
            let numbers = try ids.map { try #require(UInt64($0.split(separator: "/").last ?? "", radix: 16)) }
            let forms = [String(Int64(bitPattern: numbers[0])), "tag:google.com,2005:reader/item/" + String(numbers[1], radix: 16),
                         String(format: "%016llx", numbers[2]), "tag:google.com,2005:reader/item/" + String(format: "%016llx", numbers[0]), "12345"]
            let items = forms.map { "i=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") }.joined(separator: "&")
            for tag in ["tracking-kept-unread", "broadcast", "like", "kept-unread"] {
                #expect(try await ann.post(Self.api + "/edit-tag", "\(items)&a=user/-/state/com.google/\(tag)").text == "OK", "\(tag)")
            }
            #expect(try await ann.unread() == ["feed/cabify": 3, "user/-/state/com.google/reading-list": 3])
            for token in ["&T=anything", ""] {
                #expect(try await ann.post(Self.api + "/edit-tag", "\(items)&a=user/-/state/com.google/read\(token)").text == "OK")
            }
            #expect(try await ann.unread() == ["user/-/state/com.google/reading-list": 0])
            let starred = try await ann.post(Self.api + "/edit-tag", "\(items)&a=user/-/state/com.google/starred&r=user/-/state/com.google/like")
            #expect(starred.text == "OK")
            #expect(try await ann.stream("user/-/state/com.google/starred?n=10").ids.sorted() == ids.sorted())
        }
    }

    @Test func anAppSignsInListsCountsPagesAndMarksItsPersonsCards() async throws {
        let (state, _) = try await PeopleServeTests.people()
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), state: state, access: PeopleServeTests.accounts()) { served in
            await served.clock.untilSleeping(1)
            let refused = try await served.client.execute(uri: "/api/greader/accounts/ClientLogin", method: .post,
                                                          headers: [.contentType: "application/x-www-form-urlencoded"],
                                                          body: ByteBuffer(string: "Email=ann&Passwd=wrong"))
            #expect(refused.status == .forbidden)
            #expect(refused.text == "Error=BadAuthentication\n")
            #expect(try await served.get(Self.api + "/unread-count").status == .unauthorized)

            let ann = try await Self.signIn(served, "ann", "ann's password")
            let info = try await ann.json(Self.api + "/user-info")
            #expect(info["userName"] as? String == "ann")
            let subscriptions = try #require(try await ann.json(Self.api + "/subscription/list?output=json")["subscriptions"] as? [[String: Any]])
            #expect(subscriptions.map { $0["id"] as? String } == ["feed/cabify"])
            #expect(try await ann.unread() == ["feed/cabify": 3, "user/-/state/com.google/reading-list": 3])

            // Newest first, two at a time: the pages together are every card once.
            let first = try await ann.stream("user/-/state/com.google/reading-list?n=2")
            #expect(first.ids.count == 2)
            #expect(first.continuation == "2")
            #expect(first.categories.allSatisfy { $0.first == "user/-/state/com.google/reading-list" && !$0.contains("user/-/state/com.google/read") })
            let second = try await ann.stream("user/-/state/com.google/reading-list?n=2&c=2")
            #expect(second.ids.count == 1)
            #expect(second.continuation == nil)
            #expect(Set(first.titles + second.titles).count == 3)
            // Cabify's cards carry no date: first seen together, they keep feed order both ways.
            let oldestFirst = try await ann.stream("feed%2Fcabify?n=3&r=o")
            #expect(oldestFirst.titles == ["Cabify Voucher", "Cabify T-Shirt", "Cabify Coffee Mug"])
            #expect(Set(oldestFirst.titles) == Set(first.titles + second.titles))

            // Read by its short id, starred by its long one.
            let long = first.ids[0]
            let number = try #require(UInt64(long.split(separator: "/").last ?? "", radix: 16))
            #expect(long == "tag:google.com,2005:reader/item/" + String(format: "%016llx", number))
            #expect(try await ann.post(Self.api + "/edit-tag", "i=\(number)&a=user/-/state/com.google/read&T=x").text == "OK")
            #expect(try await ann.post(Self.api + "/edit-tag", "i=\(long.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")&a=user%2F-%2Fstate%2Fcom.google%2Fstarred").text == "OK")
            #expect(try await ann.unread() == ["feed/cabify": 2, "user/-/state/com.google/reading-list": 2])
            let unread = try await ann.stream("user/-/state/com.google/reading-list?xt=user/-/state/com.google/read")
            #expect(unread.ids.count == 2 && !unread.ids.contains(long))
            let starred = try await ann.stream("user/-/state/com.google/starred")
            #expect(starred.ids == [long])
            // The card's own tags follow the states, as plain categories.
            #expect(starred.categories.first?.prefix(3) == ["user/-/state/com.google/reading-list", "user/-/state/com.google/read", "user/-/state/com.google/starred"])
            let contents = try await ann.post(Self.api + "/stream/items/contents", "i=\(number)&i=\(second.ids[0].addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")&i=123")
            let items = try #require((try JSONSerialization.jsonObject(with: Data(contents.text.utf8)) as? [String: Any])?["items"] as? [[String: Any]])
            #expect(items.compactMap { $0["id"] as? String } == [long, second.ids[0]])
            let refs = try await ann.json(Self.api + "/stream/items/ids?s=user/-/state/com.google/starred")
            #expect((refs["itemRefs"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [String(number)])

            // Bob's marks are his own; marking all of a feed read reads Ann's only.
            let bob = try await Self.signIn(served, "bob", "bob's password")
            #expect(try await bob.unread() == ["feed/cabify": 3, "user/-/state/com.google/reading-list": 3])
            #expect(try await bob.stream("user/-/state/com.google/starred").ids.isEmpty)
            #expect(try await ann.post(Self.api + "/mark-all-as-read", "s=feed/cabify&ts=\(Int64(Date().timeIntervalSince1970 + 5) * 1_000_000)").text == "OK")
            #expect(try await ann.unread() == ["user/-/state/com.google/reading-list": 0])
            #expect(try await bob.unread() == ["feed/cabify": 3, "user/-/state/com.google/reading-list": 3])
            #expect(try await ann.post(Self.api + "/edit-tag", "i=\(number)&r=user/-/state/com.google/read").text == "OK")
            #expect(try await ann.unread() == ["feed/cabify": 1, "user/-/state/com.google/reading-list": 1])
            // Bob stars one item and marks his starred stream read: that item only.
            #expect(try await bob.post(Self.api + "/edit-tag", "i=\(number)&a=user/-/state/com.google/starred").text == "OK")
            #expect(try await bob.post(Self.api + "/mark-all-as-read", "s=user/-/state/com.google/starred").text == "OK")
            #expect(try await bob.unread() == ["feed/cabify": 2, "user/-/state/com.google/reading-list": 2])
        }
    }

    /// One app's sign-ins replace its own tokens, never another app's (issue 62): a cron
    /// reload of newsboat every ten minutes leaves the phone signed in.
    @Test func clientLoginKeepsAFewTokensPerAppAndAcceptsOneAsThePassword() async throws {
        let (state, token) = try await PeopleServeTests.people()
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify"), state: state, access: PeopleServeTests.accounts()) { served in
            let phone = try await Self.signIn(served, "ann", "ann's password", userAgent: "Reeder/5.2 CFNetwork")
            for _ in 0..<12 { _ = try await Self.signIn(served, "ann", "ann's password", userAgent: "newsboat/2.36.0 (Linux x86_64)") }
            _ = try await Self.signIn(served, "ann", "ann's password", form: "&client=FeedMe")
            var labels = try await state.accounts.tokens(of: 1).map(\.label)
            #expect(labels.filter { $0 == "Google Reader app: newsboat" }.count == 3)
            #expect(labels.filter { $0 == "Google Reader app: Reeder" }.count == 1)
            #expect(labels.filter { $0 == "Google Reader app: FeedMe" }.count == 1)
            #expect(labels.contains("phone"))
            await #expect(throws: Never.self) { _ = try await phone.json(Self.api + "/tag/list") }
            // Each app's token says when it was last used (`aggregate user tokens`).
            let reeder = try await state.accounts.tokens(of: 1).filter { $0.label == "Google Reader app: Reeder" }
            #expect(reeder.count == 1 && reeder.allSatisfy { $0.lastUsed.map { abs($0.timeIntervalSinceNow) < 60 } ?? false })
            // Eleven apps: the one signed in least recently goes.
            for number in 0..<9 { _ = try await Self.signIn(served, "ann", "ann's password", form: "&source=app\(number)") }
            labels = try await state.accounts.tokens(of: 1).map(\.label)
            #expect(!labels.contains("Google Reader app: Reeder"))
            #expect(Set(labels.filter { $0.hasPrefix("Google Reader app: ") }).count == 10)
            #expect(try await phone.get(Self.api + "/tag/list").status == .unauthorized)
            let app = try await Self.signIn(served, "ann", token)
            #expect(app.auth == token)
            await #expect(throws: Never.self) { _ = try await app.json(Self.api + "/tag/list") }
        }
    }
}
