import FeedCore
import FeedSourceTesting
import FixtureKit
import Foundation
import FixtureServer
import Testing

/// Retries, the cache and concurrency, observed through the fixture server's request log.
@Suite(.serialized) struct CachingAndConcurrencyTests {
    static let cabify = FixtureWorld.only("cabify")
    /// The URL the Cabify snapshot was recorded from.
    static let cabifyUpstream = "https://gist.githubusercontent.com/palcalde/6c19259bd32dd6aafa327fa557859c2f/raw/ba51779474a150ee4367cda4f4ffacdcca479887/Products.json"

    @Test(arguments: StateKind.all) func a503ThenSuccessIsRetriedAndSucceeds(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, sources: Self.cabify), state: state)
            server.control.set("cabify", [Fault(status: 503), .none])
            let run = try await workspace.run("--verbose")
            #expect(run.status == 0)
            #expect(run.stdoutLines.count == 3)
            #expect(run.stderrLines.first?.hasPrefix("cabify: HTTP 503 from \(base.absoluteString)/cabify/Products.json; retry 1 of 2 in ") == true)
            #expect(server.control.requests(to: "cabify").map(\.status) == [503, 200])
        }
    }

    @Test(arguments: StateKind.all) func a429WithRetryAfterWaitsAtLeastThatLong(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, sources: Self.cabify), state: state)
            server.control.set("cabify", [Fault(status: 429, retryAfter: "1"), .none])
            let run = try await workspace.run()
            #expect(run.status == 0)
            #expect(run.stderr == "")
            let requests = server.control.requests(to: "cabify")
            #expect(requests.map(\.status) == [429, 200])
            #expect(requests[1].arrival.timeIntervalSince(requests[0].finish) >= 1)
        }
    }

    @Test(arguments: StateKind.all) func aRetryAfterBeyondTheCapFailsAndSaysWhen(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: FixtureWorld.sourcesYml(
                base: base, sources: Self.cabify, extra: ["cabify": "    fallback: none\n"]), state: state)
            server.control.set("cabify", [Fault(status: 503, retryAfter: "3600")])
            let run = try await workspace.run()
            #expect(run.status == 1)
            #expect(run.stderr.contains("cabify: HTTP 503 the upstream asks to wait 3600 s (until "))
            #expect(run.stderr.contains("more than the 30 s cap; try again after that"))
            #expect(server.control.requests(to: "cabify").count == 1)
        }
    }

    @Test(arguments: StateKind.all) func insideTheTTLNoRequestIsSentAndRefreshRevalidates(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, sources: Self.cabify), state: state)
            server.control.set("cabify", [Fault(etag: "\"v1\"")])
            let first = try await workspace.run()
            let second = try await workspace.run()
            #expect(second.stdout == first.stdout)
            #expect(server.control.requests(to: "cabify").count == 1)

            let refreshed = try await workspace.run("--refresh")
            #expect(refreshed.stdout == first.stdout)
            let requests = server.control.requests(to: "cabify")
            #expect(requests.count == 2)
            #expect(requests[1].headers["if-none-match"] == "\"v1\"")
            #expect(requests[1].status == 304)
        }
    }

    @Test(arguments: StateKind.all) func anExpiredEntryIsRevalidatedWithItsETagAnd304ServesTheStoredBody(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try Workspace(sourcesYml: FixtureWorld.sourcesYml(
                base: base, sources: Self.cabify, extra: ["cabify": "    cache_ttl: 0\n"]))
            server.control.set("cabify", [Fault(etag: "\"v1\"", lastModified: "Sun, 06 Nov 1994 08:49:37 GMT")])
            let first = try await workspace.run()
            let second = try await workspace.run()
            #expect(first.status == 0 && second.status == 0)
            #expect(second.stdout == first.stdout)
            let requests = server.control.requests(to: "cabify")
            #expect(requests.map(\.status) == [200, 304])
            #expect(requests[0].headers["if-none-match"] == nil)
            #expect(requests[1].headers["if-none-match"] == "\"v1\"")
            #expect(requests[1].headers["if-modified-since"] == "Sun, 06 Nov 1994 08:49:37 GMT")
        }
    }

    @Test(arguments: StateKind.all) func aFailingUpstreamIsServedFromTheCacheAndSaysHowOld(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try Workspace(sourcesYml: FixtureWorld.sourcesYml(
                base: base, sources: Self.cabify, extra: ["cabify": "    cache_ttl: 0\n    retries: 1\n"]))
            let cachedNoEarlierThan = Date()
            let live = try await workspace.run()
            server.control.set("cabify", [Fault(status: 503)])
            let stale = try await workspace.run()
            let ageAtMost = Int(Date().timeIntervalSince(cachedNoEarlierThan).rounded(.up))
            #expect(stale.status == 0)
            #expect(stale.stdoutLines == live.stdoutLines.map {
                $0.replacingOccurrences(of: #","price""#, with: #","origin":"cache","price""#)
            })
            // The age is whole seconds, no more than the two runs took (several on a loaded CI machine).
            let allowed = (0...ageAtMost).map {
                "cabify: HTTP 503 (no retries configured) (\(base.absoluteString)/cabify/Products.json); using cached response from \($0) second\($0 == 1 ? "" : "s") ago"
            }
            #expect(stale.stderrLines.count == 1)
            #expect(allowed.contains(stale.stderrLines.first ?? ""), "\(stale.stderrLines) is not one of \(allowed)")
            let strict = try await workspace.run("--strict")
            #expect(strict.status == 3)
        }
    }

    @Test(arguments: StateKind.all) func anotherUpstreamsSnapshotIsNeverServedForThisURL(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try Workspace(sourcesYml: FixtureWorld.sourcesYml(
                base: base, sources: Self.cabify, extra: ["cabify": "    fallback: snapshot\n    retries: 1\n"]))
            server.control.set("cabify", [Fault(status: 500)])
            let run = try await workspace.run("--verbose")
            #expect(run.status == 1)
            #expect(run.stdout == "")
            #expect(run.stderrLines.first == "cabify: HTTP 500 (no retries configured) (\(base.absoluteString)/cabify/Products.json); fallback failed: no cached response (\(base.absoluteString)/cabify/Products.json); no recorded response for this URL; recorded: \(Self.cabifyUpstream) (\(base.absoluteString)/cabify/Products.json)")
        }
    }

    @Test(arguments: StateKind.all) func offlineSendsNoRequestAndUsesTheCacheFirst(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base), state: state)
            let cold = try await workspace.run("--offline")
            #expect(cold.status == 1)
            #expect(server.control.requests.isEmpty)
            let live = try await workspace.run("--per-page", "1000")
            server.control.clearLog()
            let warm = try await workspace.run("--offline", "--per-page", "1000")
            #expect(warm.status == 0)
            #expect(warm.stdoutLines.count == live.stdoutLines.count)
            #expect(warm.stdoutLines.allSatisfy { $0.contains(#""origin":"cache""#) })
            #expect(server.control.requests.isEmpty)
        }
    }

    @Test(arguments: StateKind.all) func fiveSlowSourcesAreFetchedConcurrently(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            // Three sources by address and two by name: two hosts, so the per-host limit
            // of 4 queues none of the five.
            let five = Array(FixtureWorld.sources.prefix(5))
            #expect(five.count == 5)
            let local = URL(string: base.absoluteString.replacingOccurrences(of: "127.0.0.1", with: "localhost"))!
            let yaml = "sources:\n" + five.prefix(3).map { $0.yaml(base: base) }.joined()
                + five.suffix(2).map { $0.yaml(base: local) }.joined()
            let workspace = try await Workspace(sourcesYml: yaml, state: state)
            for source in five { server.control.set(source.route, [Fault(latencyMs: 300)]) }
            let run = try await workspace.run("--per-page", "1000")
            #expect(run.status == 0)
            #expect(run.stderr == "")
            // Each source's first request; a paged source's later pages follow its first.
            let firsts = Dictionary(grouping: server.control.requests, by: \.route).values.compactMap(\.first)
            #expect(firsts.count == 5)
            for a in firsts {
                for b in firsts { #expect(a.arrival < b.finish, "\(a.route) starts before \(b.route) ends") }
            }
        }
    }

    @Test(arguments: StateKind.all) func atMostFourRequestsAreInFlightPerHost(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let shops = (1...6).map { FixtureSourceEntry(id: "shop-\($0)", plugin: "cabify", path: "/shop-a/Products.json", route: "shop-a") }
            let workspace = try await Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, sources: shops), state: state)
            server.control.set("shop-a", [Fault(latencyMs: 300)])
            let run = try await workspace.run("--per-page", "100")
            #expect(run.status == 0)
            let requests = server.control.requests
            #expect(requests.count == 6)
            let peak = requests.map { request in requests.filter { $0.arrival <= request.arrival && request.arrival < $0.finish }.count }.max()
            #expect(peak == 4)
        }
    }

    @Test(arguments: StateKind.all) func twoProcessesShareOneStateDirectory(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, extra: [
                "cabify": "    cache_ttl: 0\n", "shop-a": "    cache_ttl: 0\n", "shop-b": "    cache_ttl: 0\n",
            ]), state: state)
            let runs = try await withThrowingTaskGroup(of: [Binary.Run].self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        var runs: [Binary.Run] = []
                        for _ in 0..<5 { runs.append(try await workspace.run()) }
                        return runs
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(runs.count == 10)
            for run in runs {
                #expect(run.status == 0)
                #expect(run.stderr == "")
                #expect(run.stdout == runs[0].stdout)
            }
            #expect(!runs[0].stdoutLines.isEmpty)
        }
    }

    @Test(arguments: StateKind.all) func aProcessKilledMidRunLeavesTheStoreUsable(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, extra: [
                "cabify": "    cache_ttl: 0\n", "shop-a": "    cache_ttl: 0\n", "shop-b": "    cache_ttl: 0\n",
            ]), state: state)
            for delay in stride(from: 0, through: 90, by: 10) {
                let (process, exited) = try Binary.aggregate.launch(
                    workspace.stateArguments, in: workspace.url, stdout: workspace.url.appendingPathComponent("killed.out"))
                try await Task.sleep(for: .milliseconds(delay))
                #expect(process.processIdentifier > 0)
                if process.processIdentifier > 0 { kill(process.processIdentifier, SIGKILL) }
                #expect(await process.awaitExit(exited))
            }
            let after = try await workspace.run()
            #expect(after.status == 0)
            #expect(after.stderr == "")
            guard state == .sqlite else { return }
            let check = try await Binary(name: "sqlite3").run(
                [workspace.url.appendingPathComponent("state/cache.sqlite").path, "PRAGMA integrity_check;"],
                in: workspace.url, absolute: "/usr/bin/sqlite3")
            #expect(check.stdout == "ok\n")
        }
    }
}

/// The HTTP layer's smaller promises, through the fixture server.
@Suite(.serialized) struct HTTPBehaviourTests {
    @Test(arguments: StateKind.all) func aGzipBodyIsDecodedAndGzipIsAskedFor(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, sources: FixtureWorld.only("cabify")), state: state)
            server.control.set("cabify", [Fault(gzip: true)])
            let run = try await workspace.run()
            #expect(run.status == 0)
            #expect(run.stderr == "")
            #expect(run.stdoutLines.count == 3)
            #expect(server.control.requests.first?.headers["accept-encoding"] == "gzip, deflate")
        }
    }

    @Test(arguments: StateKind.all) func anUpstreamMaxAgeShorterThanTheTTLWins(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: FixtureWorld.sourcesYml(base: base, sources: FixtureWorld.only("cabify")), state: state)
            server.control.set("cabify", [Fault(maxAge: 0)])
            _ = try await workspace.run()
            _ = try await workspace.run()
            #expect(server.control.requests.count == 2)
            server.control.set("cabify", [Fault(maxAge: 600)])
            _ = try await workspace.run()
            _ = try await workspace.run()
            #expect(server.control.requests.count == 3)
        }
    }
}
