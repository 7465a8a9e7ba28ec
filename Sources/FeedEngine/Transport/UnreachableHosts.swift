import FeedCore
import Foundation
import Synchronization

/// Hosts that could not be reached moments ago: asked again only after ``memory``.
///
/// Without it, every `serve` request with the network down paid each source's DNS failure
/// and its retries again (0.4–0.7 s per request, 304s included) before the cache served.
/// As the cache remembers that a body is fresh, this remembers that a host is not there.
/// Only failures to connect count (no such name, refused, unreachable); anything a server
/// answered is the source's business.
public final class UnreachableHosts: Sendable {
    /// How long a failure is remembered.
    public let memory: Double
    private let failures = Mutex<[String: (failure: TransportFailure, at: Date)]>([:])

    public init(memory: Double = 30) {
        self.memory = memory
    }

    /// The failure `url`'s host had within ``memory``, if any.
    func recentFailure(_ url: URL, now: Date = Date()) -> TransportFailure? {
        failures.withLock { failures in
            guard let entry = failures[Self.host(url)] else { return nil }
            guard now.timeIntervalSince(entry.at) < memory else {
                failures[Self.host(url)] = nil
                return nil
            }
            return entry.failure
        }
    }

    func record(_ failure: TransportFailure?, for url: URL, now: Date = Date()) {
        failures.withLock { $0[Self.host(url)] = failure.map { ($0, now) } }
    }

    static func host(_ url: URL) -> String {
        "\(url.scheme ?? "http")://\(url.host ?? ""):\(url.port ?? -1)"
    }

    /// Whether `failure` says the host could not be reached at all.
    static func isUnreachable(_ failure: TransportFailure) -> Bool {
        switch failure {
        case .dns, .refused, .unreachable: true
        default: false
        }
    }
}
