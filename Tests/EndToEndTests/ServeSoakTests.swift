import FeedSourceTesting
import Foundation
import Testing

/// `serve` under a flood of reconnecting sockets at its descriptor limit (issue 39, item
/// 9): once in seven trials it trapped in libdispatch while thousands of sockets
/// reconnected at the limit. Exhaustion must be a refusal, never a crash: after 60 s of
/// 4,000 sockets opening, half-sending a request and closing, against a server allowed
/// 512 descriptors, it still answers and stops cleanly. Bounded in time and count, on
/// loopback only.
@Suite(.serialized) struct ServeSoakTests {
    static let sockets = 4_000
    static let seconds = 60

    @Test func aFloodAtTheDescriptorLimitIsRefusedNotACrash() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let stderr = session.workspace.url.appendingPathComponent("serve.err")
            _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
            let process = Process()
            // `ulimit -n` sets the soft and the hard limit: serve cannot raise it.
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n 512 && exec \"$0\" serve --port 0 --no-access-log \"$@\"", Binary.aggregate.url.path]
                + session.workspace.stateArguments
            process.currentDirectoryURL = session.workspace.url
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: stderr)
            process.standardInput = FileHandle.nullDevice
            let exited = try process.start()
            var base: String?
            for _ in 0..<200 where base == nil {
                let text = String(decoding: (try? Data(contentsOf: stderr)) ?? Data(), as: UTF8.self)
                if let range = text.range(of: #"http://127\.0\.0\.1:\d+"#, options: .regularExpression) { base = String(text[range]) }
                try await Task.sleep(for: .milliseconds(50))
            }
            let served = try #require(base, "serve did not start: \(String(decoding: (try? Data(contentsOf: stderr)) ?? Data(), as: UTF8.self))")
            let port = try #require(Int(served.split(separator: ":").last ?? ""))
            let log = { String(decoding: (try? Data(contentsOf: stderr)) ?? Data(), as: UTF8.self) }
            #expect(log().contains("serving at most 256 connections"), "\(log())")

            let deadline = ContinuousClock.now + .seconds(Self.seconds)
            let pid = process.processIdentifier
            // The descriptors serve holds, sampled while the flood runs.
            let sampler = Task {
                var most = 0
                while ContinuousClock.now < deadline {
                    most = max(most, (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0)
                    try? await Task.sleep(for: .milliseconds(100))
                }
                return most
            }
            // The flood runs in a process of its own: Foundation's Process.run() in this
            // one (every other test spawns binaries) crashed once beside 4,000 open sockets.
            let flood = try await Binary(name: "python3").run([Self.floodScript, String(port), String(Self.sockets), String(Self.seconds)],
                                                             in: session.workspace.url, absolute: "/usr/bin/python3")
            #expect(flood.status == 0, "\(flood.stderr)")
            let connected = Int(flood.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            let most = await sampler.value
            // More connections than serve has descriptors: the flood reached its limit (over
            // 4,000 on an idle machine; 1,790 once under CI's load, where the flood shares
            // two cores with the other tests).
            #expect(connected > 512, "only \(connected) connections were made")
            // Never at the limit: room is left for what the server itself must open.
            #expect(most > 0 && most <= 512 - 64, "serve held \(most) of its 512 descriptors")
            #expect(process.isRunning, "serve died: \(log())")
            let health = try await ServeTests.get(served + "/healthz")
            #expect(health.status == 200)
            process.terminate()
            #expect(await process.awaitExit(exited))
            #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(log())")
        }
    }

    /// Tests/Soak/flood.py in this checkout.
    static let floodScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Soak/flood.py").path
}
