import FeedCore
import Foundation
import Synchronization

/// Requests in flight, shared: while one request for a URL (with the same headers) is on
/// its way, every other caller asking for it waits for that one instead of sending its
/// own. `serve` puts this under every source's cache, so fifty readers arriving at once
/// on a cold cache cost each upstream page one request, not fifty.
public final class SharedRequests: Sendable {
    private let inFlight = Mutex<[String: Task<HTTPResponse, any Error>]>([:])

    public init() {}

    func send(_ request: HTTPRequest, through base: any HTTPTransport) async throws -> HTTPResponse {
        let key = request.url.absoluteString + "\n" + request.headers.sorted { $0.key < $1.key }
            .map { "\($0.key): \($0.value)" }.joined(separator: "\n")
        let task = inFlight.withLock { flights in
            if let running = flights[key] { return running }
            let task = Task { try await base.send(request) }
            flights[key] = task
            return task
        }
        defer { inFlight.withLock { flights in if flights[key] == task { flights[key] = nil } } }
        return try await task.value
    }
}

/// A transport whose requests go through ``SharedRequests``.
struct SharedRequestTransport: HTTPTransport {
    let base: any HTTPTransport
    let shared: SharedRequests

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await shared.send(request, through: base)
    }
}
