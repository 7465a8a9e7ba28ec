import FeedConfig
import FeedSupport
import Foundation
import ServiceLifecycle
import Synchronization
import UnixSignals

/// How `serve` reads its Sources.yml again: the file to watch, and the loading itself
/// (the same validation as at start-up).
public struct ConfigReload: Sendable {
    /// The file's path, as found at start-up.
    public var path: String
    /// Loads the file again; its error's description says what is wrong, with lines.
    public var load: @Sendable () throws -> FeedConfig
    /// How often the file is looked at for a change.
    public var poll: Duration

    public init(path: String, poll: Duration = .seconds(2), load: @escaping @Sendable () throws -> FeedConfig) {
        self.path = path
        self.poll = poll
        self.load = load
    }
}

/// Whether the running configuration is the file's, for `/healthz`.
final class ConfigStatus: Sendable {
    struct Snapshot: Encodable {
        /// When the running configuration was loaded.
        var loaded: String
        /// Why the file as it is now does not load (the running configuration stays).
        var error: String?
    }

    private let state = Mutex(Snapshot(loaded: RFC3339.string(from: ConfigStatus.now())))

    private static func now() -> Date {
        Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
    }

    var snapshot: Snapshot { state.withLock { $0 } }

    func loaded() {
        state.withLock { $0 = Snapshot(loaded: RFC3339.string(from: Self.now())) }
    }

    func failed(_ error: String) {
        state.withLock { $0.error = error }
    }
}

/// Reads Sources.yml again on SIGHUP and when the file's bytes change (looked at every
/// ``ConfigReload/poll``: editors, `aggregate add` and `import`, and configuration
/// managers replace the file by a rename, which a poll sees and a watch on the old file
/// would not). A file that loads is served (``FeedServer/reload(to:)``); one that does
/// not leaves the running configuration in place and says why on stderr and in `/healthz`.
struct ConfigWatcher: Sendable {
    let reload: ConfigReload
    let say: @Sendable (String) -> Void

    /// The watcher bound to the server it reloads.
    struct Running: Service {
        let watcher: ConfigWatcher
        let server: FeedServer

        func run() async throws {
            let reasons = AsyncStream<String>.makeStream()
            let signals = await UnixSignalsSequence(trapping: .sighup)
            await cancelWhenGracefulShutdown {
                await withDiscardingTaskGroup { group in
                    group.addTask {
                        for await _ in signals { reasons.continuation.yield("SIGHUP") }
                    }
                    group.addTask {
                        var seen = FileManager.default.contents(atPath: watcher.reload.path)
                        while (try? await Task.sleep(for: watcher.reload.poll)) != nil {
                            let now = FileManager.default.contents(atPath: watcher.reload.path)
                            if now != seen, now != nil {
                                seen = now
                                reasons.continuation.yield("a change to the file")
                            }
                        }
                    }
                    // One reload at a time, in the order asked.
                    for await reason in reasons.stream {
                        await watcher.apply(reason: reason, to: server)
                    }
                }
            }
        }
    }

    func apply(reason: String, to server: FeedServer) async {
        let config: FeedConfig
        do {
            config = try reload.load()
        } catch {
            let why = String(describing: error)
            server.routes.configStatus.failed(why)
            say("aggregate: \(reload.path) no longer loads (after \(reason)), so serve keeps the configuration it has until the file is fixed:\n\(why)")
            return
        }
        let changes = await server.reload(to: config)
        server.routes.configStatus.loaded()
        say("aggregate: reloaded \(config.file) after \(reason): \(changes)")
    }
}
