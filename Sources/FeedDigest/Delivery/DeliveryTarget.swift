import FeedConfig
import FeedCore
import FeedEngine
import FeedState
import FeedSupport
import Foundation

/// Where a digest's report goes (`deliver:`): one small protocol, one file per kind, and
/// ``InMemoryDeliveryTarget`` for tests.
public protocol DeliveryTarget: Sendable {
    /// What the digest store tracks this target's reports under (no secrets).
    var key: String { get }
    /// Keys its reports may be stored under from earlier versions (reports owed then are
    /// still delivered).
    var formerKeys: [String] { get }
    /// How messages name it (secrets redacted).
    var name: String { get }
    /// The request body (and headers) this target gets for `report`, made once when the
    /// report is committed; `text` is the report rendered in the digest's format.
    func payload(for report: DigestReport, text: String) -> DeliveryPayload
    /// Sends `payload`, retrying what may pass; the same `reportID` on every retry and
    /// every later run, so a receiver that honours `Idempotency-Key` takes it once.
    func deliver(_ payload: DeliveryPayload, reportID: String) async throws(DeliveryFailure)
    /// Whether the target keeps only the last report it was given (a file): then one owed
    /// report is delivered per run, so none is replaced before anyone could read it.
    var holdsOneReport: Bool { get }
}

extension DeliveryTarget {
    public var holdsOneReport: Bool { false }
    public var formerKeys: [String] { [] }
}

/// Why a target did not take a report. Either way it is kept and sent again next run.
public enum DeliveryFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The receiver may take it later: a 5xx, 429, a timeout, no connection.
    case temporary(String)
    /// The receiver refused it (a 4xx): it will not pass without a change of config.
    case permanent(String)

    public var description: String {
        switch self {
        case .temporary(let reason), .permanent(let reason): reason
        }
    }
}

extension DeliveryTargetConfig {
    /// The target this declaration describes; `${VAR}` in a webhook's URL and headers is
    /// expanded from `environment` when it delivers. `identity` (the state's keyed hash)
    /// names a secret written into a webhook's URL in the stored key.
    public func target(digest: String, identity: RequestIdentity,
                       environment: [String: String] = ProcessInfo.processInfo.environment) -> any DeliveryTarget {
        let key = key(identity: identity)
        switch kind {
        case .webhook(let url, let style, let headers):
            return WebhookTarget(key: key, formerKeys: key == writtenKey ? [] : [writtenKey], name: name, url: url, style: style,
                                 headers: headers, environment: environment)
        case .exec(let command, let timeout):
            return ExecTarget(key: key, name: name, command: command, timeout: timeout, digest: digest)
        case .file(let path):
            return FileTarget(key: key, name: name, path: path)
        }
    }
}

/// A target in memory, for tests: records what it was sent, and fails while told to.
public actor InMemoryDeliveryTarget: DeliveryTarget {
    public nonisolated let key: String
    public nonisolated var name: String { "memory \(key)" }
    public private(set) var received: [(reportID: String, payload: DeliveryPayload)] = []
    /// How many deliveries from now on fail (temporarily).
    public var failures = 0

    public init(key: String) {
        self.key = key
    }

    public func fail(times: Int) {
        failures = times
    }

    public nonisolated func payload(for report: DigestReport, text: String) -> DeliveryPayload {
        DeliveryPayload(body: text)
    }

    public func deliver(_ payload: DeliveryPayload, reportID: String) async throws(DeliveryFailure) {
        if failures > 0 {
            failures -= 1
            throw .temporary("failing on purpose")
        }
        received.append((reportID, payload))
    }
}

extension DeliveryTargetConfig {
    /// What the digest store tracks deliveries under: the target as written, before any
    /// `${VAR}` is expanded, so a secret from the environment is never stored and a rotated
    /// one is the same target. A secret written into a webhook's URL itself (`?key=…`,
    /// `user:password@`) is stored redacted, with a keyed hash of the whole URL so that
    /// two such targets stay apart (``key(identity:)``).
    public func key(identity: RequestIdentity) -> String {
        guard case .webhook(let url, _, _) = kind else { return writtenKey }
        let redacted = Redaction.url(url)
        guard redacted != url else { return writtenKey }
        return writtenKey.replacingOccurrences(of: url, with: redacted) + " #" + identity.tag(url)
    }
}
