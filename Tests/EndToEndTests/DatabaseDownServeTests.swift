import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// A replica of `serve` on a shared PostgreSQL state while the database is down (issue 39,
/// item 11): both replicas refreshed on their failure backoff and every card lookup went
/// upstream (cabify: 64 requests in 30 s instead of 2). Without a lease a replica refreshes
/// no more often than the interval, and a card it found is answered from memory.
@Suite(.serialized, .enabled(if: PostgresTestServer.isAvailable, Comment(rawValue: PostgresTestServer.skipReason)))
struct DatabaseDownServeTests {
    @Test func withoutTheDatabaseLookupsComeFromMemoryAndRefreshKeepsItsInterval() async throws {
        try await PrivateCluster.withCluster { cluster in
            try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), extra: ["cabify": "    cache_ttl: 600\n    refresh: 5\n"]) { session in
                let (process, exited, log) = try Self.serve(in: session, on: cluster)
                defer { process.terminate() }
                let served = try await Self.base(log)
                // The card is looked up once while all is well.
                #expect(try await ServeTests.get(served + "/cards/cabify:MUG").status == 200)

                try await cluster.pause()
                session.server.control.clearLog()
                let start = ContinuousClock.now
                let wallStart = Date()
                for _ in 0 ..< 20 {
                    let answer = try await ServeTests.get(served + "/cards/cabify:MUG")
                    #expect(answer.status == 200)
                    #expect(answer.body.hasPrefix(#"{"id":"cabify:MUG""#))
                }
                let lookups = ContinuousClock.now - start
                // Six seconds (or as long as the lookups took, on a loaded machine) of a 5 s
                // refresh interval: a refresh at most every 5 s, and no lookup of its own.
                try await Task.sleep(until: start + .seconds(6))
                let window = (ContinuousClock.now - start) / .seconds(1)
                let requests = session.server.control.requests(to: "cabify")
                // Which requests, when and how, for the failure message.
                let seen = requests.map { request in
                    let offset = request.arrival.timeIntervalSince(wallStart)
                    return "\(request.path) at \(String(format: "%.2f", offset)) s\(request.headers["if-none-match"] != nil || request.headers["if-modified-since"] != nil ? " (conditional)" : "")"
                }
                let allowed = 1 + Int(window / 5)
                #expect(requests.count <= allowed, "\(requests.count) upstream requests in \(String(format: "%.1f", window)) s with the database down (the 20 lookups took \(lookups)): \(seen); serve said: \(log())")
                let arrivals = requests.map(\.arrival)
                for (earlier, later) in zip(arrivals, arrivals.dropFirst()) {
                    #expect(later.timeIntervalSince(earlier) >= 4.5, "refreshes closer than the 5 s interval: \(seen)")
                }
                try await cluster.resume()
                #expect(await process.terminate(awaiting: exited), "serve did not stop within 30 s of SIGTERM: \(log())")
            }
        }
    }

    /// PostgresNIO hands a statement to its connection without a way to fail it: one sent as
    /// the database went down was never answered, and `serve`, told to stop, waited for it
    /// for ever. Seen under CI's load with a source; with none and readers while the
    /// database was down, every time.
    @Test func serveStopsAfterTheDatabaseRestarts() async throws {
        try await PrivateCluster.withCluster { cluster in
            try await FixtureWorld.withSession(sources: []) { session in
                let (process, exited, log) = try Self.serve(in: session, on: cluster)
                defer { process.terminate() }
                let served = try await Self.base(log)
                try await cluster.pause()
                // Readers while it is down, as above (of a card no source here makes).
                for _ in 0 ..< 20 {
                    #expect(try await ServeTests.get(served + "/cards/cabify:MUG").status == 404)
                }
                try await Task.sleep(for: .seconds(6))
                try await cluster.resume()
                #expect(await process.terminate(awaiting: exited, seconds: 20), "serve did not stop within 20 s of SIGTERM: \(log())")
            }
        }
    }

    /// `serve` on `cluster` in `session`'s workspace: the process, its exit, and its stderr so far.
    private static func serve(in session: FixtureSession, on cluster: PrivateCluster) throws
        -> (process: Process, exited: AsyncStream<Void>, log: @Sendable () -> String) {
        let stderr = session.workspace.url.appendingPathComponent("serve.err")
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        let process = Process()
        process.executableURL = Binary.aggregate.url
        process.arguments = ["serve", "--port", "0", "--no-access-log", "--state", cluster.url]
        process.currentDirectoryURL = session.workspace.url
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: stderr)
        process.standardInput = FileHandle.nullDevice
        let exited = try process.start()
        return (process, exited, { String(decoding: (try? Data(contentsOf: stderr)) ?? Data(), as: UTF8.self) })
    }

    /// The address `serve` says it listens on, once it says so (within 20 s).
    private static func base(_ log: @Sendable () -> String) async throws -> String {
        var base: String?
        for _ in 0..<400 where base == nil {
            if let range = log().range(of: #"http://127\.0\.0\.1:\d+"#, options: .regularExpression) { base = String(log()[range]) }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try #require(base, "serve did not start: \(log())")
    }
}
