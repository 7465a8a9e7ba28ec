import FeedSourceTesting
import Foundation
import Testing

/// How the tests run programs (``TestProcess``): one that overruns its time is stopped,
/// says where it was, and fails its own test instead of holding the whole run.
struct TestProcessTests {
    @Test func aProgramThatOverrunsIsStoppedWithItsBacktracesAndNamed() async throws {
        let workspace = try Workspace(sourcesYml: try Workspace.shippedSourcesYml)
        let arguments = ["serve", "--port", "0", "--offline", "--state-dir", "state"]
        let start = ContinuousClock.now
        do {
            let run = try await Binary.aggregate.run(arguments, in: workspace.url, timeLimit: .seconds(3))
            Issue.record("serve exited by itself: \(run.status) \(run.stderr)")
        } catch let overran as TestProcess.Overran {
            #expect(overran.command == [Binary.aggregate.url.path] + arguments)
            #expect(overran.description.hasPrefix(
                "\(Binary.aggregate.url.path) serve --port 0 --offline --state-dir state did not exit within 3.0 seconds and was stopped; its stderr:\naggregate: serving 5 sources on http://127.0.0.1:"))
            // SIGABRT first, and its stderr read after the stop: the Swift runtime's handler
            // says it is backtracing (the threads follow where its backtracer may attach).
            // serve lives on after an outside SIGABRT once it has backtraced: SIGKILL ends it.
            #expect(overran.stderr.contains("\n*** Signal 6: Backtracing from 0x"), "\(overran.stderr)")
        }
        // Three seconds, at most 20 for the backtraces, five for SIGKILL to take, and
        // room for a machine busy with every other suite.
        #expect(ContinuousClock.now - start < .seconds(120))
    }

    @Test func aProgramThatIgnoresSIGABRTIsKilled() async throws {
        let start = ContinuousClock.now
        await #expect(throws: TestProcess.Overran.self) {
            _ = try await TestProcess.run(URL(fileURLWithPath: "/bin/bash"), ["-c", "trap '' ABRT; echo waiting >&2; sleep 600.4242"],
                                           timeLimit: .seconds(1))
        }
        // One second, then 20 for the backtraces it does not print, then SIGKILL to its
        // group, with room for a busy machine: far from the ten minutes it would sleep.
        #expect(ContinuousClock.now - start < .seconds(120))
        // Its `sleep` went with it.
        let running = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        let sleeping = running.filter { pid in
            Int(pid) != nil && ((try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data())
                .split(separator: 0).map { String(decoding: $0, as: UTF8.self) } == ["sleep", "600.4242"]
        }
        #expect(sleeping == [])
    }
}
