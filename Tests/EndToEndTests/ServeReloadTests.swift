import FeedSourceTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `serve` follows its Sources.yml while it runs (issue 43), with the built binary: a
/// subscribe and an unsubscribe through the Google Reader API edit the file and are
/// served at once; `aggregate add` from another shell is picked up from the file; a file
/// that no longer loads leaves the running configuration and says why (stderr,
/// `/healthz`); SIGHUP reads the file again.
@Suite(.serialized) struct ServeReloadTests {
    static let form = [("content-type", "application/x-www-form-urlencoded")]

    /// Waits up to 15 s for `condition`.
    static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<150 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    static func configuredIDs(_ served: ServeTests.Served) async throws -> [String] {
        let body = try await ServeTests.get(served.base + "/sources").body
        let rows = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]] ?? []
        return rows.compactMap { $0["id"] as? String }
    }

    @Test func subscribeAndUnsubscribeThroughTheAPIEditTheFileAndServeIt() async throws {
        // The fixture server is on this machine: a private address, which only
        // --allow-private-feeds lets people subscribe to (ServeWallsTests).
        try await ServeTests.withServe(sources: FixtureWorld.only("cabify"), extra: ["cabify": "    cache_ttl: 600\n"],
                                       arguments: ["--allow-private-feeds"]) { session, served in
            let api = served.base + "/api/greader/reader/api/0"
            let feed = session.base.absoluteString + "/feed/news.rss.xml"
            let added = try await ServeTests.get(api + "/subscription/quickadd?quicksub=feed/" + feed, method: .POST, headers: Self.form)
            #expect(added.status == 200)
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(added.body.utf8)) as? [String: Any])
            #expect(answer["numResults"] as? Int == 1 && answer["query"] as? String == "feed/" + feed)
            let stream = try #require(answer["streamId"] as? String)
            let id = String(stream.dropFirst("feed/".count))
            let file = try String(contentsOf: session.workspace.url.appendingPathComponent("Sources.yml"), encoding: .utf8)
            #expect(file.contains("  - id: \(id)   # subscribed through the Google Reader API\n"), "\(file)")
            #expect(file.contains("    url: \"\(feed)\"\n"))
            // Served at once: listed, and its items in its stream after its first refresh.
            #expect(try await Self.configuredIDs(served) == ["cabify", id])
            let items = try await ServeTests.get(api + "/stream/contents/" + stream)
            #expect(items.status == 200 && items.body.contains(#""streamId":"\#(stream)""#), "\(items.body)")
            #expect(served.log.contains("aggregate: reloaded Sources.yml after a subscribe through the Google Reader API: 1 added (\(id)), 1 unchanged"), "\(served.log)")
            // The same URL again adds nothing.
            let again = try await ServeTests.get(api + "/subscription/quickadd?quicksub=" + feed, method: .POST, headers: Self.form)
            #expect(again.body.contains(#""numResults":1"#) && again.body.contains(#""streamId":"\#(stream)""#))
            // Not a feed: nothing written, said as FreshRSS says it, in the words of every failure.
            let page = try await ServeTests.get(api + "/subscription/quickadd?quicksub=" + session.base.absoluteString + "/reqres/api/users%3Fpage%3D2",
                                                method: .POST, headers: Self.form)
            #expect(page.body.contains(#""numResults":0"#) && page.body.contains("no feed that this server may subscribe to was found at that address"), "\(page.body)")
            #expect(served.log.contains("found no feed: "), "serve's own log says why: \(served.log)")

            // Renamed and put in a folder: the entry rewritten in its place.
            let edited = try await ServeTests.get(api + "/subscription/edit?ac=edit&s=\(stream)&t=Morning%20News&a=user/-/label/Daily",
                                                  method: .POST, headers: Self.form)
            #expect(edited.status == 200 && edited.body == "OK", "\(edited.body)")
            let renamed = try String(contentsOf: session.workspace.url.appendingPathComponent("Sources.yml"), encoding: .utf8)
            #expect(renamed.contains("  - id: \(id)\n    name: \"Morning News\"\n    plugin: feed\n    url: \"\(feed)\"\n    options:\n      tags: [\"Daily\"]\n"), "\(renamed)")
            let list = try await ServeTests.get(api + "/subscription/list").body
            #expect(list.contains(#""title":"Morning News""#) && list.contains(#""label":"Daily""#), "\(list)")
            // cabify's entry has a setting the API does not write: changing it is left to the file.
            let cabify = try await ServeTests.get(api + "/subscription/edit?ac=edit&s=feed/cabify&t=Shop", method: .POST, headers: Self.form)
            #expect(cabify.status == 409 && cabify.body.contains("has settings besides id, name, plugin, url and tags; change it in the file"), "\(cabify.body)")

            let removed = try await ServeTests.get(api + "/subscription/edit?ac=unsubscribe&s=" + stream, method: .POST, headers: Self.form)
            #expect(removed.status == 200 && removed.body == "OK")
            let after = try String(contentsOf: session.workspace.url.appendingPathComponent("Sources.yml"), encoding: .utf8)
            #expect(!after.contains(feed))
            #expect(try await Self.configuredIDs(served) == ["cabify"])
            let unknown = try await ServeTests.get(api + "/subscription/edit?ac=unsubscribe&s=feed/nothing", method: .POST, headers: Self.form)
            #expect(unknown.status == 404 && unknown.body == "s: no subscription is feed/nothing\n")
        }
    }

    @Test func anEditedFileIsServedABrokenOneIsNotAndSIGHUPReadsItAgain() async throws {
        try await ServeTests.withServe(sources: FixtureWorld.only("cabify")) { session, served in
            let blog = session.base.absoluteString + "/feed/blog.atom.xml"
            let add = try await session.run("add", blog, "--id", "blog")
            #expect(add.status == 0, "\(add.stderr)")
            #expect(try await Self.eventually { try await Self.configuredIDs(served) == ["cabify", "blog"] })
            #expect(served.log.contains("aggregate: reloaded Sources.yml after a change to the file: 1 added (blog), 1 unchanged"), "\(served.log)")
            let feed = try await ServeTests.get(served.base + "/feed.jsonl?source=blog")
            #expect(feed.status == 200 && feed.body.contains(#""source":"blog""#))

            // A mistake in the file: the running configuration stays, and says why.
            let path = session.workspace.url.appendingPathComponent("Sources.yml")
            let good = try String(contentsOf: path, encoding: .utf8)
            try (good + "bogus: 1\n").write(to: path, atomically: true, encoding: .utf8)
            #expect(try await Self.eventually { served.log.contains("no longer loads (after a change to the file)") }, "\(served.log)")
            #expect(served.log.contains("so serve keeps the configuration it has until the file is fixed:\nSources.yml:"), "\(served.log)")
            let health = try await ServeTests.get(served.base + "/healthz").body
            #expect(health.contains(#""status":"degraded""#) && health.contains(#""error":"Sources.yml:"#) && health.contains("bogus"), "\(health)")
            #expect(try await Self.configuredIDs(served) == ["cabify", "blog"])
            #expect(try await ServeTests.get(served.base + "/feed.jsonl?source=blog").status == 200)

            // Fixed: served again; SIGHUP reads it again even unchanged.
            try good.write(to: path, atomically: true, encoding: .utf8)
            #expect(try await Self.eventually { !(try await ServeTests.get(served.base + "/healthz").body.contains(#""error""#)) })
            kill(served.process.processIdentifier, SIGHUP)
            #expect(try await Self.eventually { served.log.contains("aggregate: reloaded Sources.yml after SIGHUP: 2 unchanged") }, "\(served.log)")
            #expect(served.process.isRunning)
        }
    }
}
