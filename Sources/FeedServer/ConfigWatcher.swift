import ServeAccess
import ServeHTTP
import FeedConfig
import FeedEngine
import FeedSupport
import Foundation
import ServiceLifecycle
import Synchronization
import UnixSignals

/// How `serve` changes its configuration: the Sources.yml to watch and edit, its loader
/// (the same validation as at start-up), and what subscribing fetches with.
public struct ConfigReload: Sendable {
    /// The file's path, as found at start-up.
    public var path: String
    public var loader: ConfigLoader
    /// How often the file is looked at for a change.
    public var poll: Duration
    /// Fetches a feed someone subscribes to through the API (nil offline: no subscribing).
    public var http: LiveHTTPTransport?

    public init(path: String, loader: ConfigLoader, poll: Duration = .seconds(2), http: LiveHTTPTransport?) {
        self.path = path
        self.loader = loader
        self.poll = poll
        self.http = http
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

    private let state: Mutex<(snapshot: Snapshot, bytes: Data?)>

    /// `bytes`: the file as loaded at start-up.
    init(bytes: Data?) {
        state = Mutex((Snapshot(loaded: RFC3339.string(from: Self.now())), bytes))
    }

    private static func now() -> Date {
        Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
    }

    var snapshot: Snapshot { state.withLock { $0.snapshot } }

    /// Whether `bytes` are not what was last loaded or tried.
    func differs(_ bytes: Data) -> Bool {
        state.withLock { $0.bytes != bytes }
    }

    func loaded(_ bytes: Data?) {
        state.withLock { $0 = (Snapshot(loaded: RFC3339.string(from: Self.now())), bytes) }
    }

    func failed(_ error: String, _ bytes: Data?) {
        state.withLock { state in
            state.snapshot.error = error
            state.bytes = bytes
        }
    }
}

/// Reads Sources.yml again on SIGHUP and when the file's bytes change (looked at every
/// ``ConfigReload/poll``: editors, `aggregate add` and `import`, and configuration
/// managers replace the file by a rename, which a poll sees and a watch on the old file
/// would not). A file that loads is served (``Reconfiguration/reload(to:)``); one that
/// does not leaves the running configuration in place and says why on stderr and in
/// `/healthz`.
struct ConfigWatcher: Service {
    let reconfiguration: Reconfiguration
    let reload: ConfigReload

    func run() async throws {
        let reasons = AsyncStream<String>.makeStream()
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await _ in signals { reasons.continuation.yield("SIGHUP") }
                }
                group.addTask {
                    while (try? await Task.sleep(for: reload.poll)) != nil {
                        if let now = FileManager.default.contents(atPath: reload.path), reconfiguration.status.differs(now) {
                            reasons.continuation.yield("a change to the file")
                        }
                    }
                }
                // One reload at a time, in the order asked.
                for await reason in reasons.stream {
                    await reconfiguration.reloadFile(after: reason)
                }
            }
        }
    }
}
