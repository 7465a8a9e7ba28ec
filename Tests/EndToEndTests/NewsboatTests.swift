import AsyncHTTPClient
import FeedSourceTesting
import FixtureKit
import FixtureServer
import Foundation
import Testing

/// Where newsboat is installed, if it is.
enum Newsboat {
    static let path = ["/usr/bin/newsboat", "/usr/local/bin/newsboat"].first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// A real Google Reader client against the built binary (issue 43): newsboat from Debian's
/// packages in its FeedHQ mode, reloading with `newsboat -x reload` and read through its
/// cache database; its keys driven on a pseudo-terminal (Tests/Clients/newsboat_keys.py).
/// Skipped, saying so, where newsboat is not installed (`.ci/run` installs it).
@Suite(.serialized, .enabled(if: Newsboat.path != nil, "newsboat is not installed (apt-get install newsboat)"))
struct NewsboatTests {
    static let password = "a long enough password"

    /// Runs `executable` with `arguments` in `directory`; its exit status and stdout.
    static func run(_ executable: String, _ arguments: [String], in directory: URL) async throws -> (status: Int32, stdout: String) {
        let run = try await TestProcess.run(URL(fileURLWithPath: executable), arguments, in: directory,
                                             environment: ["HOME": directory.path, "TERM": "xterm", "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"])
        return (run.status, run.stdout)
    }

    /// Rows of newsboat's cache database, as JSON arrays (Python's sqlite3 reads it).
    static func rows(_ sql: String, in directory: URL) async throws -> [[Any]] {
        let script = "import json, sqlite3, sys; print(json.dumps(sqlite3.connect('cache.db').execute(sys.argv[1]).fetchall()))"
        let (status, stdout) = try await run("/usr/bin/python3", ["-c", script, sql], in: directory)
        #expect(status == 0)
        return try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [[Any]] ?? []
    }

    /// An API call as ann, with her token (Basic would cost a bcrypt check each).
    static func api(_ served: ServeTests.Served, _ path: String, form: String? = nil, token: String) async throws -> String {
        let basic = ("Authorization", "Bearer \(token)")
        if let form {
            var request = HTTPClientRequest(url: served.base + "/api/greader/reader/api/0/" + path)
            request.method = .POST
            request.headers.add(name: basic.0, value: basic.1)
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(Array(form.utf8))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            return String(decoding: Array(try await response.body.collect(upTo: 1 << 20).readableBytesView), as: UTF8.self)
        }
        return try await ServeTests.get(served.base + "/api/greader/reader/api/0/" + path, headers: [basic]).body
    }

    @Test func newsboatListsEverySourceAndSyncsReadAndStarredBothWays() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify") + FixtureWorld.only("target")) { session in
            let workspace = session.workspace.url
            #expect(try await session.workspace.run(arguments: ["user", "add", "ann", "--password-stdin"], stdin: Self.password + "\n").status == 0)
            let token = try await session.workspace.run(arguments: ["user", "token", "ann"]).stdout.trimmingCharacters(in: .newlines)
            let served = try await ServeTests.Served.start(session)
            do {
                // The background refresh's first recording.
                for _ in 0..<100 {
                    if try await Self.api(served, "unread-count", token: token).contains(#""id":"feed/target""#) { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                let config = """
                    urls-source "feedhq"
                    feedhq-url "\(served.base)/api/greader"
                    feedhq-login "ann"
                    feedhq-password "\(Self.password)"
                    feedhq-show-special-feeds no
                    feedhq-flag-star "s"

                    """
                try Data(config.utf8).write(to: workspace.appendingPathComponent("newsboat.conf"))
                try Data().write(to: workspace.appendingPathComponent("urls"))
                let newsboat = try #require(Newsboat.path)
                let reload = ["-C", "newsboat.conf", "-c", "cache.db", "-u", "urls", "-x", "reload"]
                #expect(try await Self.run(newsboat, reload, in: workspace).status == 0)

                // Every source, by its name, with every item, unread.
                let atom = served.base + "/api/greader/reader/atom/feed%2F"
                let feeds = try await Self.rows("SELECT rssurl, title FROM rss_feed ORDER BY rssurl", in: workspace)
                #expect(feeds.map { $0.map { "\($0)" } } == [[atom + "cabify?n=20", "cabify"], [atom + "target?n=20", "target"]])
                let items = try await Self.rows("SELECT feedurl, count(*), sum(unread) FROM rss_item GROUP BY feedurl ORDER BY feedurl", in: workspace)
                #expect(items.map { $0.map { "\($0)" } } == [[atom + "cabify?n=20", "3", "3"], [atom + "target?n=20", "20", "20"]])

                // Read through the API: read in newsboat after its next reload.
                let guid = try #require(try await Self.rows("SELECT guid FROM rss_item WHERE feedurl LIKE '%cabify%' ORDER BY guid LIMIT 1", in: workspace).first?.first as? String)
                #expect(try await Self.api(served, "edit-tag", form: "i=\(guid)&a=user/-/state/com.google/read", token: token) == "OK")
                #expect(try await Self.run(newsboat, reload, in: workspace).status == 0)
                let unread = try await Self.rows("SELECT unread FROM rss_item WHERE guid = '\(guid)'", in: workspace)
                #expect(unread.first?.first as? Int == 0)

                // Read in newsboat (A: the first feed, cabify, all read): read through the API.
                let keys = ReadmeSections.root.appendingPathComponent("Tests/Clients/newsboat_keys.py").path
                let driven = try await Self.run("/usr/bin/python3", [keys, workspace.path, "newsboat.conf", "cache.db", "urls", "A", "q"], in: workspace)
                #expect(driven.status == 0)
                let counts = try await Self.api(served, "unread-count", token: token)
                #expect(!counts.contains(#""id":"feed/cabify""#) && counts.contains(#"{"count":20,"id":"feed/target""#), "\(counts)")

                // Starred in newsboat (the flag `s` on target's first article): starred through the API.
                let starring = try await Self.run("/usr/bin/python3", [keys, workspace.path, "newsboat.conf", "cache.db", "urls", "j", "\\r", "\\x05", "s\\r", "q", "q"],
                                                  in: workspace)
                #expect(starring.status == 0)
                let flagged = try await Self.rows("SELECT guid FROM rss_item WHERE flags LIKE '%s%'", in: workspace).compactMap { $0.first as? String }
                #expect(flagged.count == 1)
                let starred = try await Self.api(served, "stream/items/ids?s=user/-/state/com.google/starred", token: token)
                let number = try #require(flagged.first.flatMap { UInt64($0.split(separator: "/").last ?? "", radix: 16) })
                #expect(starred.contains(#""id":"\#(number)""#), "\(starred)")
            } catch {
                await served.stop()
                throw error
            }
            await served.stop()
        }
    }

    /// Issue 62: `feedhq-url` typed with a trailing slash reloads every item, a podcast's
    /// enclosure reaches newsboat's cache (for podboat), and ten reloads (each a ClientLogin)
    /// leave another app's token working.
    @Test func aTrailingSlashKeepsEveryItemAndItsEnclosureAndReloadsSignNoAppOut() async throws {
        let sources = [FixtureSourceEntry(id: "podcast", plugin: "feed", path: "/feed/podcast.xml", route: "feed")] + FixtureWorld.only("cabify")
        try await FixtureWorld.withSession(sources: sources) { session in
            let workspace = session.workspace.url
            #expect(try await session.workspace.run(arguments: ["user", "add", "ann", "--password-stdin"], stdin: Self.password + "\n").status == 0)
            let served = try await ServeTests.Served.start(session)
            do {
                let basic = PeopleEndToEndTests.basic("ann", Self.password)
                for _ in 0..<100 {
                    let counts = try await ServeTests.get(served.base + "/api/greader/reader/api/0/unread-count", headers: [basic]).body
                    if counts.contains(#""id":"feed/podcast""#) && counts.contains(#""id":"feed/cabify""#) { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                // Another app signs in first (a phone).
                let phone = try await ServeTests.get(served.base + "/api/greader/accounts/ClientLogin", method: .POST,
                                                     headers: [("Content-Type", "application/x-www-form-urlencoded"), ("User-Agent", "Reeder/5.0")],
                                                     body: "Email=ann&Passwd=\(Self.password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
                let phoneToken = try #require(phone.body.split(separator: "\n").first { $0.hasPrefix("Auth=") }).dropFirst(5)
                let config = """
                    urls-source "feedhq"
                    feedhq-url "\(served.base)/api/greader/"
                    feedhq-login "ann"
                    feedhq-password "\(Self.password)"
                    feedhq-show-special-feeds no

                    """
                try Data(config.utf8).write(to: workspace.appendingPathComponent("newsboat.conf"))
                try Data().write(to: workspace.appendingPathComponent("urls"))
                let newsboat = try #require(Newsboat.path)
                let reload = ["-C", "newsboat.conf", "-c", "cache.db", "-u", "urls", "-x", "reload"]
                for _ in 0..<10 { #expect(try await Self.run(newsboat, reload, in: workspace).status == 0) }

                let items = try await Self.rows("SELECT rss_feed.title, count(*) FROM rss_feed JOIN rss_item ON rss_item.feedurl = rss_feed.rssurl GROUP BY rss_feed.title ORDER BY rss_feed.title", in: workspace)
                #expect(items.map { $0.map { "\($0)" } } == [["cabify", "3"], ["podcast", "4"]])
                let files = try await Self.rows("SELECT enclosure_url, enclosure_type FROM rss_item WHERE enclosure_url <> '' ORDER BY enclosure_url", in: workspace)
                #expect(!files.isEmpty && files.allSatisfy { ($0.first as? String)?.hasPrefix("http") == true }, "\(files)")

                let stillSignedIn = try await ServeTests.get(served.base + "/api/greader/reader/api/0/unread-count",
                                                             headers: [("Authorization", "GoogleLogin auth=\(phoneToken)")])
                #expect(stillSignedIn.status == 200, "\(stillSignedIn.body)")
                let tokens = try await session.workspace.run(arguments: ["user", "tokens", "ann"]).stdout
                #expect(tokens.components(separatedBy: "Google Reader app: newsboat").count - 1 == 3, "\(tokens)")
                #expect(tokens.contains("Google Reader app: Reeder"), "\(tokens)")
            } catch {
                await served.stop()
                throw error
            }
            await served.stop()
        }
    }

}
