import AsyncHTTPClient
import FeedConfig
import FeedCore
import FeedSourceTesting
import FixtureKit
#if canImport(FoundationXML)
import FixtureServer
#endif
import Foundation
import FoundationXML
import NIOCore
import NIOHTTP1
import Testing

/// `aggregate serve`, the built binary, against the fixture server (issue 13).
@Suite(.serialized) struct ServeTests {
    static let sources = FixtureWorld.only("cabify") + FixtureWorld.only("target")

    /// A running `aggregate serve --port 0` in `session`'s workspace; stopped with SIGTERM.
    struct Served {
        let process: Process
        let exited: AsyncStream<Void>
        let stderr: URL
        let base: String

        /// `listening` is the address pattern the start line names (another with `--host`).
        static func start(_ session: FixtureSession, arguments: [String] = [],
                          listening: String = #"http://127\.0\.0\.1:\d+"#) async throws -> Served {
            let stderr = session.workspace.url.appendingPathComponent("serve.err")
            _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
            let process = Process()
            process.executableURL = Binary.aggregate.url
            process.arguments = ["serve", "--port", "0"] + arguments + session.workspace.stateArguments
            process.currentDirectoryURL = session.workspace.url
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: stderr)
            process.standardInput = FileHandle.nullDevice
            let exited = try process.start()
            for _ in 0..<200 {
                let text = String(decoding: (try? Data(contentsOf: stderr)) ?? Data(), as: UTF8.self)
                if let range = text.range(of: listening, options: .regularExpression) {
                    return Served(process: process, exited: exited, stderr: stderr, base: String(text[range]))
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            process.terminate()
            throw ServeTestError.didNotStart
        }

        var log: String { String(decoding: (try? Data(contentsOf: stderr)) ?? Data(), as: UTF8.self) }

        func stop() async {
            process.terminate()
            #expect(await process.awaitExit(exited))
        }
    }

    enum ServeTestError: Error { case didNotStart }

    struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: String
        var bytes: [UInt8]
    }

    /// A client that answers a redirect as it comes (a sign-in's 303 and its cookie).
    static let noRedirects = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))

    static func get(_ url: String, method: HTTPMethod = .GET, headers: [(String, String)] = [], body: String? = nil,
                    followRedirects: Bool = true) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(Array(body.utf8)) }
        let response = try await (followRedirects ? HTTPClient.shared : noRedirects).execute(request, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 50 << 20)
        let bytes = Array(buffer.readableBytesView)
        return Answer(status: Int(response.status.code), headers: response.headers, body: String(decoding: bytes, as: UTF8.self),
                      bytes: bytes)
    }

    /// `prepare` runs in the session before `serve` starts (adding users, say).
    static func withServe(sources: [FixtureSourceEntry] = sources, extra: [String: String] = [:], preamble: String = "",
                          faults: [String: [Fault]] = [:], scale: Int = 1, arguments: [String] = [],
                          prepare: (FixtureSession) async throws -> Void = { _ in },
                          _ body: (FixtureSession, Served) async throws -> Void) async throws {
        try await FixtureWorld.withSession(sources: sources, extra: extra, preamble: preamble, faults: faults, scale: scale) { session in
            try await prepare(session)
            let served = try await Served.start(session, arguments: arguments)
            do {
                try await body(session, served)
            } catch {
                await served.stop()
                throw error
            }
            await served.stop()
        }
    }

    /// The names of every element of an XML document, and how often each occurs.
    final class ElementCounter: NSObject, XMLParserDelegate {
        var counts: [String: Int] = [:]
        var root: String?
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            if root == nil { root = name }
            counts[name, default: 0] += 1
        }
    }

    static func parseXML(_ text: String) -> ElementCounter? {
        let parser = XMLParser(data: Data(text.utf8))
        let counter = ElementCounter()
        parser.delegate = counter
        return parser.parse() ? counter : nil
    }

    @Test func everyRouteAndFormat() async throws {
        try await Self.withServe { session, served in
            let cli = try await session.run("--format", "jsonl")
            #expect(cli.status == 0)
            let cards = cli.stdoutLines.count
            #expect(cards == 20)

            let jsonl = try await Self.get(served.base + "/feed.jsonl")
            #expect(jsonl.status == 200)
            #expect(jsonl.body == cli.stdout)
            #expect(jsonl.headers.first(name: "content-type") == "application/jsonl; charset=utf-8")
            #expect(jsonl.headers.first(name: "cache-control") == "max-age=300")

            let atom = try await Self.get(served.base + "/feed.atom")
            #expect(atom.headers.first(name: "content-type") == "application/atom+xml; charset=utf-8")
            let atomXML = try #require(Self.parseXML(atom.body), "Atom is not well-formed XML")
            #expect(atomXML.root == "feed")
            #expect(atomXML.counts["entry"] == cards)
            #expect(atomXML.counts["id"] == cards + 1 && atomXML.counts["updated"] == cards + 1)
            #expect(atom.body.contains("<id>tag:aggregate,2026:card/cabify:MUG</id>"))
            // A card's kind and source are categories of a scheme of ours; `label` is a
            // category's name for people, which "kind" and "source" are not.
            #expect(atom.body.contains(#"<category term="item" scheme="tag:aggregate,2026:kind"/>"#))
            #expect(atom.body.contains(#"<category term="cabify" scheme="tag:aggregate,2026:source"/>"#))
            #expect(!atom.body.contains(#"label="kind""#) && !atom.body.contains(#"label="source""#))
            #expect(atom.body.contains(#"<link rel="self" type="application/atom+xml" href="\#(served.base)/feed.atom"/>"#))

            let rss = try await Self.get(served.base + "/feed.rss?source=cabify")
            let rssXML = try #require(Self.parseXML(rss.body), "RSS is not well-formed XML")
            #expect(rssXML.root == "rss")
            #expect(rssXML.counts["item"] == 3 && rssXML.counts["guid"] == 3 && rssXML.counts["pubDate"] == 3)
            #expect(rssXML.counts["channel"] == 1 && rssXML.counts["link"] == 1 && rssXML.counts["description"] == 4)

            let feed = try await Self.get(served.base + "/feed.json?source=target&sort=price&per_page=5")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(feed.bytes)) as? [String: Any])
            #expect(object["version"] as? String == "https://jsonfeed.org/version/1.1")
            let items = try #require(object["items"] as? [[String: Any]])
            #expect(items.count == 5)
            #expect(items.allSatisfy { $0["id"] is String && $0["content_html"] is String && $0["date_published"] is String })

            let card = try await Self.get(served.base + "/cards/cabify:MUG")
            #expect(card.status == 200)
            #expect(card.body == #"{"id":"cabify:MUG","kind":"item","price":{"amount":7.5,"currency":"EUR"},"source":"cabify","tags":[],"title":"Cabify Coffee Mug","v":1}"# + "\n")
            let missing = try await Self.get(served.base + "/cards/cabify:NOPE")
            #expect(missing.status == 404)
            #expect(missing.headers.first(name: "content-type") == "application/problem+json")
            #expect(missing.body == #"{"detail":"cabify: no item \"NOPE\"","status":404,"title":"Not Found","type":"about:blank"}"#)

            let bad = try await Self.get(served.base + "/feed.atom?per_page=0")
            #expect(bad.status == 400)
            #expect(bad.body == #"{"detail":"per_page: must be a whole number from 1 to 1000, got \"0\"","invalid-params":[{"name":"per_page","reason":"must be a whole number from 1 to 1000, got \"0\""}],"status":400,"title":"Bad Request","type":"about:blank"}"#)
            let unknown = try await Self.get(served.base + "/feed.atom?sortt=price")
            #expect(unknown.status == 400)
            #expect(unknown.body.contains(#""name":"sortt""#))
            let badSource = try await Self.get(served.base + "/feed.rss?source=nope")
            #expect(badSource.status == 400)
            #expect(badSource.body.contains(#"unknown source \"nope\" (known: cabify, target)"#))

            let sources = try await Self.get(served.base + "/sources")
            #expect(sources.body.hasPrefix(#"[{"enabled":true,"fallback":"cache","headers":[],"id":"cabify","plugin":"cabify","url":"\#(session.base)/cabify/Products.json"}"#))
            let health = try await Self.get(served.base + "/healthz")
            #expect(health.body.contains(#""status":"ok""#))
            let index = try await Self.get(served.base + "/")
            #expect(index.headers.first(name: "content-type") == "text/html; charset=utf-8")
            #expect(index.body.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
            // The reader: the feeds' autodiscovery links, each format and the OPML linked.
            #expect(index.body.contains(#"<link rel="alternate" type="application/atom+xml" title="aggregate (Atom)" href="/feed.atom">"#))
            #expect(index.body.contains(#"<li><a href="/feed.atom">Atom</a></li>"#))
            #expect(index.body.contains(#"<li><a href="/sources.opml">OPML</a></li>"#))

            // Every source fresh: no request reaches an upstream.
            session.clearLog()
            #expect(try await Self.get(served.base + "/feed.atom?sort=title").status == 200)
            #expect(session.requests.isEmpty)

            // Conditional GET.
            let etag = try #require(atom.headers.first(name: "etag"))
            let again = try await Self.get(served.base + "/feed.atom", headers: [("If-None-Match", etag)])
            #expect(again.status == 304 && again.bytes.isEmpty)
            let lastModified = try #require(atom.headers.first(name: "last-modified"))
            #expect(try await Self.get(served.base + "/feed.atom", headers: [("If-Modified-Since", lastModified)]).status == 304)
            #expect(try await Self.get(served.base + "/feed.atom", headers: [("If-None-Match", "\"other\"")]).status == 200)

            // gzip when asked for.
            let zipped = try await Self.get(served.base + "/feed.atom", headers: [("Accept-Encoding", "gzip")])
            #expect(zipped.headers.first(name: "content-encoding") == "gzip")
            // The client inflates it again: the same feed, in fewer than half the bytes on the wire.
            #expect(zipped.body == atom.body)
            #expect((zipped.headers.first(name: "content-length").flatMap(Int.init) ?? .max) < atom.bytes.count / 2)

            // (The access log is written in batches, every 100 ms.)
            try await Task.sleep(for: .milliseconds(300))
            #expect(served.log.contains("GET /feed.atom?per_page=0 400 "))
        }
    }

    /// A kept answer leaves from the connection's event loop, ahead of the router: the same
    /// status, headers and bytes as the router's, for HEAD and a 304 as well, counted in
    /// `/metrics` and written to the access log like any other request.
    @Test func keptAnswersMatchTheRoutersAndAreCounted() async throws {
        try await FixtureWorld.withSession(sources: Self.sources) { session in
            let served = try await Served.start(session, arguments: ["--metrics"])
            let url = served.base + "/feed.atom?per_page=7"
            let gzip = [("Accept-Encoding", "gzip")]
            do {
                try await ServeScaleTests.refreshed(served, sources: 2)
                let rendered = try await Self.get(url, headers: gzip)
                let kept = try await Self.get(url, headers: gzip)
                #expect(kept.status == 200 && kept.bytes == rendered.bytes)
                // Every header the same, in the same order, but the date (a second may pass).
                func comparable(_ headers: HTTPHeaders) -> [String] {
                    headers.filter { $0.name.lowercased() != "date" }.map { "\($0.name.lowercased()): \($0.value)" }
                }
                #expect(comparable(kept.headers) == comparable(rendered.headers))
                #expect(kept.headers.first(name: "date") != nil)
                // HEAD of the identity representation (the test client asks for gzip unless
                // told otherwise, and cannot inflate an empty body): its headers, no body.
                let identity = [("Accept-Encoding", "identity")]
                let plain = try await Self.get(url, headers: identity)
                let head = try await Self.get(url, method: .HEAD, headers: identity)
                #expect(plain.status == 200 && plain.headers.first(name: "content-encoding") == nil)
                #expect(head.status == 200 && head.bytes.isEmpty)
                #expect(comparable(head.headers) == comparable(plain.headers))
                #expect(head.headers.first(name: "content-length") == "\(plain.bytes.count)")
                let etag = try #require(kept.headers.first(name: "etag"))
                let notModified = try await Self.get(url, headers: gzip + [("If-None-Match", etag)])
                #expect(notModified.status == 304 && notModified.bytes.isEmpty)
                let metrics = try await Self.get(served.base + "/metrics").body.split(separator: "\n")
                #expect(metrics.contains(#"aggregate_response_cache_total{result="miss"} 1"#))
                #expect(metrics.contains(#"aggregate_response_cache_total{result="hit"} 4"#))
                #expect(metrics.contains(#"aggregate_http_requests_total{route="/feed.atom",status="200"} 4"#))
                #expect(metrics.contains(#"aggregate_http_requests_total{route="/feed.atom",status="304"} 1"#))
            } catch {
                await served.stop()
                throw error
            }
            // Stopped, the server has written out its access log.
            await served.stop()
            let lines = served.log.split(separator: "\n").filter { $0.contains(" /feed.atom?per_page=7 ") }
                .map { $0.split(separator: " ").prefix(3).joined(separator: " ") }
            #expect(lines == ["GET /feed.atom?per_page=7 200", "GET /feed.atom?per_page=7 200", "GET /feed.atom?per_page=7 200",
                              "HEAD /feed.atom?per_page=7 200", "GET /feed.atom?per_page=7 304"])
        }
    }

    /// Fifty readers arriving at once on a cold cache: one upstream request per page.
    @Test func fiftyConcurrentColdRequestsShareOneUpstreamRequestPerPage() async throws {
        try await Self.withServe(faults: ["cabify": [Fault(latencyMs: 500)], "target": [Fault(latencyMs: 500)]]) { session, served in
            let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
                for _ in 0..<50 { group.addTask { try await Self.get(served.base + "/feed.jsonl") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == 50)
            #expect(answers.allSatisfy { $0.status == 200 && $0.body == answers[0].body })
            #expect(answers[0].body.split(separator: "\n").count == 20)
            #expect(session.server.control.requests(to: "cabify").count == 1)
            #expect(session.server.control.requests(to: "target").count == 1)
        }
    }

    /// Thirty-two readers when the cached pages expire: one conditional request per page,
    /// not one per reader (issue 28, defect 4). Every reader is let in at once
    /// (`--max-active-requests 64`), so all of them ask for the pages within moments of
    /// each other, well inside the next expiry however slowly they are then rendered.
    @Test func expiredEntriesAreRevalidatedOncePerPage() async throws {
        let ttl = "    cache_ttl: 5\n"
        let routes = ["target", "reqres"]
        let ids = ["target", "users"]
        let faults = Dictionary(uniqueKeysWithValues: routes.map { ($0, [Fault(latencyMs: 50, etag: "\"\($0)-1\"")]) })
        try await Self.withServe(sources: FixtureWorld.only(ids[0], ids[1]),
                                 extra: ["target": ttl, "users": ttl], faults: faults, scale: 200,
                                 arguments: ["--no-background-refresh", "--max-active-requests", "64"]) { session, served in
            #expect(try await Self.get(served.base + "/feed.jsonl").status == 200)
            let warm = routes.map { session.server.control.requests(to: $0).count }
            try await Task.sleep(for: .milliseconds(5100))
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<32 { group.addTask { try await Self.get(served.base + "/feed.jsonl").status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.count == 32 && statuses.allSatisfy { $0 == 200 })
            for (route, warmCount) in zip(routes, warm) {
                let requests = session.server.control.requests(to: route).dropFirst(warmCount)
                // One conditional request per page.
                #expect(requests.count == warmCount, "\(route): \(requests.count) after \(warmCount)")
                #expect(requests.allSatisfy { $0.status == 304 })
            }
        }
    }

    /// A failing source is served from its fallback, said in a header and on /healthz
    /// (readers fetching what is stale themselves; the background refresh has its own test).
    @Test func aFailingSourceIsServedFromItsFallback() async throws {
        try await Self.withServe(extra: ["cabify": "    cache_ttl: 0\n    retries: 1\n"], arguments: ["--no-background-refresh"]) { session, served in
            #expect(try await Self.get(served.base + "/feed.jsonl?source=cabify").status == 200)
            session.server.control.set("cabify", [Fault(status: 500)])
            let degraded = try await Self.get(served.base + "/feed.jsonl?source=cabify")
            #expect(degraded.status == 200)
            #expect(degraded.headers.first(name: "x-aggregate-degraded") == "cabify=cache")
            #expect(degraded.body.split(separator: "\n").count == 3)
            #expect(degraded.body.split(separator: "\n").allSatisfy { $0.contains(#""origin":"cache""#) })
            let health = try await Self.get(served.base + "/healthz")
            #expect(health.body.contains(#""status":"degraded""#))
            #expect(health.body.contains(#""cabify":{"checked":"#))
            #expect(health.body.contains(#""status":"cache""#))
        }
    }

    /// SIGTERM while a request is in flight: it finishes, then the server stops.
    @Test func sigtermLetsTheRequestInFlightFinish() async throws {
        try await Self.withServe(faults: ["cabify": [Fault(latencyMs: 1500)]]) { session, served in
            async let slow = Self.get(served.base + "/feed.jsonl?source=cabify")
            try await Task.sleep(for: .milliseconds(500))
            served.process.terminate()
            let answer = try await slow
            #expect(answer.status == 200)
            #expect(answer.body.split(separator: "\n").count == 3)
            let stopped = await served.process.awaitExit(served.exited, within: .seconds(60))
            #expect(stopped)
            #expect(stopped && served.process.terminationStatus == 0)
            #expect(served.log.hasSuffix("aggregate: stopped\n"))
        }
    }

    /// HTTP as feed readers and `curl -I` use it (issue 28, defects 13, 15 and 16).
    @Test func headUnknownRoutesFilteredFeedsAndRepresentations() async throws {
        try await Self.withServe { _, served in
            // HEAD answers like GET, without a body.
            // (The test client asks for gzip unless told otherwise, and cannot inflate the empty
            // body of a HEAD answer: HEAD asks for the identity representation.)
            let identity = [("Accept-Encoding", "identity")]
            let get = try await Self.get(served.base + "/feed.atom", headers: identity)
            let head = try await Self.get(served.base + "/feed.atom", method: .HEAD, headers: identity)
            #expect(head.status == 200 && head.bytes.isEmpty)
            #expect(head.headers.first(name: "etag") == get.headers.first(name: "etag"))
            #expect(head.headers.first(name: "content-type") == "application/atom+xml; charset=utf-8")
            #expect(try await Self.get(served.base + "/", method: .HEAD, headers: identity).status == 200)

            // An unknown route is a problem, not an empty body.
            let missing = try await Self.get(served.base + "/nope")
            #expect(missing.status == 404)
            #expect(missing.headers.first(name: "content-type") == "application/problem+json")
            #expect(missing.body == #"{"detail":"no such route: /nope (see / for the feeds)","status":404,"title":"Not Found","type":"about:blank"}"#)

            // A card id percent-encoded in the path is decoded.
            let card = try await Self.get(served.base + "/cards/target%3A1")
            #expect(card.status == 200)
            #expect(card.body.contains(#""id":"target:1""#))

            // Every distinct query is a feed of its own: its id and self link; the same
            // parameters in another order are the same feed.
            func feedID(_ body: String) -> String? {
                body.range(of: #"(?<=<id>)[^<]*(?=</id>)"#, options: .regularExpression).map { String(body[$0]) }
            }
            let all = try await Self.get(served.base + "/feed.atom")
            let target = try await Self.get(served.base + "/feed.atom?source=target&kind=deal")
            let reordered = try await Self.get(served.base + "/feed.atom?kind=deal&source=target")
            #expect(feedID(all.body) == "tag:aggregate,2026:feed/aggregate")
            #expect(feedID(target.body) == "tag:aggregate,2026:feed/aggregate?kind=deal&amp;source=target")
            #expect(feedID(reordered.body) == feedID(target.body))
            #expect(target.body.contains(#"<link rel="self" type="application/atom+xml" href="\#(served.base)/feed.atom?source=target&amp;kind=deal"/>"#))
            let rss = try await Self.get(served.base + "/feed.rss?source=cabify")
            #expect(rss.body.contains(#"<atom:link href="\#(served.base)/feed.rss?source=cabify" rel="self" type="application/rss+xml"/>"#),
                    "\(rss.body.prefix(800))")

            // gzip is another representation with a tag of its own; each revalidates itself.
            let plain = try await Self.get(served.base + "/feed.atom", headers: identity)
            let gzip = try await Self.get(served.base + "/feed.atom", headers: [("Accept-Encoding", "gzip")])
            let plainTag = try #require(plain.headers.first(name: "etag"))
            let gzipTag = try #require(gzip.headers.first(name: "etag"))
            #expect(gzip.headers.first(name: "content-encoding") == "gzip")
            #expect(gzipTag == plainTag.dropLast() + "-gzip\"")
            #expect(try await Self.get(served.base + "/feed.atom", headers: [("Accept-Encoding", "gzip"), ("If-None-Match", gzipTag)]).status == 304)
            #expect(try await Self.get(served.base + "/feed.atom", headers: identity + [("If-None-Match", gzipTag)]).status == 200)
            #expect(try await Self.get(served.base + "/feed.atom", headers: identity + [("If-None-Match", plainTag)]).status == 304)
            // With a card store the index is a person's own (their marks, their forms' token):
            // stored by no cache, and so without a validator.
            let index = try await Self.get(served.base + "/")
            #expect(index.headers.first(name: "cache-control") == "no-store")
            #expect(index.headers.first(name: "etag") == nil)
        }
    }
}
