import AsyncHTTPClient
import Crypto
import FeedSourceTesting
import FixtureKit
import Foundation
import Testing

/// The Fever API (issue 62) against the built binary, by a client written here from the
/// protocol's documentation: the key is the MD5 of `name:password`, every call a POST of
/// it to `?api&…`; groups and feeds, items paged by `since_id` until an empty page, unread
/// and saved ids, marks. What it marks, the command line and the Google Reader API see.
@Suite struct FeverTests {
    static let password = "ann's account password"
    static let feverPassword = "a password for fever apps"

    /// A Fever app: its key, and its calls.
    struct Client {
        let base: String
        let key: String

        init(base: String, name: String, password: String) {
            self.base = base
            key = Insecure.MD5.hash(data: Data("\(name):\(password)".utf8)).map { String(format: "%02x", $0) }.joined()
        }

        /// `?api&query` with the key (and `form`) posted; the answer's JSON object.
        func call(_ query: String, _ form: String = "") async throws -> [String: Any] {
            let answer = try await ServeTests.get(base + "/api/fever/?api" + (query.isEmpty ? "" : "&" + query), method: .POST,
                                                  headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                  body: "api_key=\(key)" + (form.isEmpty ? "" : "&" + form))
            #expect(answer.status == 200, "\(query): \(answer.body)")
            return try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
        }

        /// Every item, by `since_id` from 0 until a page comes back empty, as the
        /// documentation says to sync; the pages' sizes.
        func sync() async throws -> (items: [[String: Any]], pages: [Int]) {
            var items: [[String: Any]] = []
            var pages: [Int] = []
            var since = 0
            while pages.count < 100 {
                let page = try #require(try await call("items&since_id=\(since)")["items"] as? [[String: Any]])
                pages.append(page.count)
                guard let last = page.last?["id"] as? Int else { break }
                items += page
                since = last
            }
            return (items, pages)
        }

        func ids(_ member: String) async throws -> [Int] {
            let list = try #require(try await call(member)[member] as? String)
            return list.split(separator: ",").compactMap { Int($0) }
        }
    }

    /// Three feeds in two folders.
    static let sources = [
        FixtureSourceEntry(id: "blog", plugin: "feed", path: "/feed/blog.atom.xml", route: "feed", extraYAML: "    options:\n      tags: [\"Friends\"]\n"),
        FixtureSourceEntry(id: "news", plugin: "feed", path: "/feed/news.rss.xml", route: "feed", extraYAML: "    options:\n      tags: [\"News\"]\n"),
        FixtureSourceEntry(id: "podcast", plugin: "feed", path: "/feed/podcast.xml", route: "feed", extraYAML: "    options:\n      tags: [\"News\"]\n"),
    ]

    @Test func aFeverAppSyncsMarksAndSavesAndTheCommandLineAgrees() async throws {
        try await ServeTests.withServe(sources: Self.sources, prepare: { session in
            #expect(try await session.workspace.run(arguments: ["user", "add", "ann", "--password-stdin"], stdin: Self.password + "\n").status == 0)
            // Fever's password is its own: the account's is refused, saying why.
            let same = try await session.workspace.run(arguments: ["user", "fever", "ann"], stdin: Self.password + "\n")
            #expect(same.status == 2)
            #expect(same.stderr.contains("the Fever password must not be ann's own"), "\(same.stderr)")
            let set = try await session.workspace.run(arguments: ["user", "fever", "ann"], stdin: Self.feverPassword + "\n")
            #expect(set.status == 0, "\(set.stderr)")
            let tokens = try await session.workspace.run(arguments: ["user", "tokens", "ann"]).stdout
            #expect(tokens.contains("\tnever used\tFever API\n"), "\(tokens)")
        }) { session, served in
            let app = Client(base: served.base, name: "ann", password: Self.feverPassword)
            // Wrong keys, and the account's password, are not signed in.
            for wrong in [Client(base: served.base, name: "ann", password: Self.password), Client(base: served.base, name: "bob", password: Self.feverPassword)] {
                let answer = try await wrong.call("items")
                #expect(answer.count == 2 && answer["auth"] as? Int == 0 && answer["api_version"] as? Int == 3, "\(answer)")
            }
            let bare = try await ServeTests.get(served.base + "/api/fever.php?api")
            #expect(bare.status == 200 && bare.body == #"{"api_version":3,"auth":0}"#)

            // The background refresh's first recording: 5 + 6 + 4 entries.
            var total = 0
            for _ in 0..<100 {
                total = try await app.call("items")["total_items"] as? Int ?? 0
                if total == 15 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(total == 15)

            let signedIn = try await app.call("")
            #expect(signedIn["auth"] as? Int == 1 && (signedIn["last_refreshed_on_time"] as? Int ?? 0) > 1_700_000_000, "\(signedIn)")
            let groupsAnswer = try await app.call("groups")
            let groups = try #require(groupsAnswer["groups"] as? [[String: Any]])
            #expect(groups.compactMap { $0["title"] as? String } == ["Friends", "News"])
            let feedsAnswer = try await app.call("feeds")
            let feeds = try #require(feedsAnswer["feeds"] as? [[String: Any]])
            #expect(feeds.compactMap { $0["title"] as? String } == ["blog", "news", "podcast"])
            let feedID = Dictionary(uniqueKeysWithValues: feeds.compactMap { feed in (feed["title"] as? String).flatMap { title in (feed["id"] as? Int).map { (title, $0) } } })
            let groupID = Dictionary(uniqueKeysWithValues: groups.compactMap { group in (group["title"] as? String).flatMap { title in (group["id"] as? Int).map { (title, $0) } } })
            let members = try #require(feedsAnswer["feeds_groups"] as? [[String: Any]])
            let byGroup = Dictionary(uniqueKeysWithValues: members.compactMap { row in (row["group_id"] as? Int).map { ($0, row["feed_ids"] as? String ?? "") } })
            #expect(byGroup == [try #require(groupID["Friends"]): "\(try #require(feedID["blog"]))",
                                try #require(groupID["News"]): "\(try #require(feedID["news"])),\(try #require(feedID["podcast"]))"])
            #expect((try await app.call("favicons")["favicons"] as? [[String: Any]])?.first?["id"] as? Int == 1)

            // Every item once, in increasing ids, then an empty page.
            let (items, pages) = try await app.sync()
            #expect(pages == [15, 0])
            let ids = items.compactMap { $0["id"] as? Int }
            #expect(ids == ids.sorted() && Set(ids).count == 15)
            #expect(items.allSatisfy { ($0["is_read"] as? Int) == 0 && ($0["url"] as? String)?.hasPrefix("http") == true })
            #expect(try await app.ids("unread_item_ids") == ids)
            #expect(try await app.ids("saved_item_ids") == [])

            // Read one item, the podcast feed up to now, and save a news item.
            let blogItem = try #require(items.first { $0["feed_id"] as? Int == feedID["blog"] })
            let newsItem = try #require(items.first { $0["feed_id"] as? Int == feedID["news"] })
            let read = try #require(blogItem["id"] as? Int), saved = try #require(newsItem["id"] as? Int)
            _ = try await app.call("", "mark=item&as=read&id=\(read)")
            _ = try await app.call("", "mark=feed&as=read&id=\(try #require(feedID["podcast"]))&before=\(Int(Date().timeIntervalSince1970) + 1)")
            _ = try await app.call("", "mark=item&as=saved&id=\(saved)")
            let podcast = Set(items.filter { $0["feed_id"] as? Int == feedID["podcast"] }.compactMap { $0["id"] as? Int })
            #expect(podcast.count == 4)
            let unread = ids.filter { $0 != read && !podcast.contains($0) }
            #expect(try await app.ids("unread_item_ids") == unread)
            #expect(try await app.ids("saved_item_ids") == [saved])
            let again = try await app.call("items&with_ids=\(read),\(saved)")["items"] as? [[String: Any]] ?? []
            #expect(again.map { "\($0["id"] ?? "") \($0["is_read"] ?? "") \($0["is_saved"] ?? "")" } == ["\(min(read, saved)) \(read < saved ? "1 0" : "0 1")", "\(max(read, saved)) \(read < saved ? "0 1" : "1 0")"])

            // The command line sees ann's marks: 10 unread, the saved one starred.
            let unreadLines = try await session.workspace.run(arguments: ["--unread", "--user", "ann", "--all", "--format", "jsonl"])
            #expect(unreadLines.status == 0, "\(unreadLines.stderr)")
            #expect(unreadLines.stdout.split(separator: "\n").count == unread.count)
            #expect(!unreadLines.stdout.contains(#""source":"podcast""#))
            let starred = try await session.workspace.run(arguments: ["--starred", "--user", "ann", "--format", "jsonl"])
            #expect(starred.stdout.split(separator: "\n").count == 1)
            let savedTitle = try #require(newsItem["title"] as? String)
            #expect(starred.stdout.contains(#""title":"\#(savedTitle)""#), "\(starred.stdout)")
            // An item unsaved and marked unread in Fever is so everywhere.
            _ = try await app.call("", "mark=item&as=unsaved&id=\(saved)")
            _ = try await app.call("", "mark=item&as=unread&id=\(read)")
            #expect(try await session.workspace.run(arguments: ["--starred", "--user", "ann", "--format", "jsonl"]).stdout.isEmpty)
            let after = try await session.workspace.run(arguments: ["--unread", "--user", "ann", "--all", "--format", "jsonl"])
            #expect(after.stdout.split(separator: "\n").count == unread.count + 1)
            // The group read (`News`, before now): only Friends' blog is left unread.
            _ = try await app.call("", "mark=group&as=read&id=\(try #require(groupID["News"]))&before=\(Int(Date().timeIntervalSince1970) + 1)")
            let blog = Set(items.filter { $0["feed_id"] as? Int == feedID["blog"] }.compactMap { $0["id"] as? Int })
            #expect(Set(try await app.ids("unread_item_ids")) == blog)
        }
    }
}
