import FeedCore
import Foundation
import Synchronization

/// The ways one source can be served, tried in order: the live network (absent with
/// `--offline`), then the fallbacks its `fallback:` policy allows.
public struct TransportTier: Sendable {
    /// `nil` for the live network.
    public var origin: Card.Origin?
    public var transport: any HTTPTransport

    public init(origin: Card.Origin?, transport: any HTTPTransport) {
        self.origin = origin
        self.transport = transport
    }
}

/// Builds the tiers for a source. The engine's standard provider is
/// ``StandardTransports``; tests may supply their own transports.
public protocol TransportProvider: Sendable {
    func tiers(for source: SourceConfig, recordings: [RecordedResponse]) -> [TransportTier]
}

/// Live network (unless offline), then the recorded snapshot when allowed.
public struct StandardTransports: TransportProvider {
    public let live: LiveHTTPTransport?

    /// `live == nil` means offline: no socket is ever opened.
    public init(live: LiveHTTPTransport?) {
        self.live = live
    }

    public func tiers(for source: SourceConfig, recordings: [RecordedResponse]) -> [TransportTier] {
        var tiers: [TransportTier] = []
        if let live {
            tiers.append(TransportTier(origin: nil, transport: SourceNetworkTransport(
                live: live, headers: source.headers, timeout: source.timeout)))
        }
        if live == nil || source.fallback == .snapshot {
            tiers.append(TransportTier(origin: .snapshot, transport: SnapshotTransport(recordings)))
        }
        return tiers
    }
}

/// Remembers the last URL a source asked for, so a failure can name it.
final class RequestTracker: HTTPTransport {
    private let base: any HTTPTransport
    private let state = Mutex<(last: URL?, count: Int)>((nil, 0))

    init(_ base: any HTTPTransport) {
        self.base = base
    }

    var lastURL: URL? { state.withLock { $0.last } }
    var requestCount: Int { state.withLock { $0.count } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        state.withLock {
            $0.last = request.url
            $0.count += 1
        }
        return try await base.send(request)
    }
}
