import FeedCore
import Foundation
import Logging
import Synchronization

/// The live tier's cache: a response younger than the TTL is served without a request;
/// an older one is revalidated with `If-None-Match`/`If-Modified-Since` (a 304 serves
/// the stored body); every good response is stored for later runs and fallbacks.
struct CachingTransport: HTTPTransport {
    let network: any HTTPTransport
    let store: StateStore
    /// The source's `cache_ttl`; the upstream's `max-age` wins when shorter.
    let ttl: Double
    /// `--refresh`: ignore the TTL, but still revalidate.
    let refresh: Bool
    let logger: Logger

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let cached = await lookup(request.url)
        if let cached, !refresh, Date().timeIntervalSince(cached.fetchedAt) < min(ttl, cached.maxAge ?? ttl) {
            return HTTPResponse(status: cached.status, headers: [:], body: cached.body, url: request.url)
        }
        var conditional = request
        if let etag = cached?.etag { conditional.headers["If-None-Match"] = etag }
        if let lastModified = cached?.lastModified { conditional.headers["If-Modified-Since"] = lastModified }
        let response = try await network.send(conditional)
        if response.status == 304, let cached {
            await write { try await store.revalidated(request.url, headers: response.headers) }
            return HTTPResponse(status: cached.status, headers: response.headers, body: cached.body, url: request.url)
        }
        if response.isSuccess {
            await write { try await store.store(response, for: request.url) }
        }
        return response
    }

    private func lookup(_ url: URL) async -> CachedResponse? {
        do {
            return try await store.cachedResponse(for: url)
        } catch {
            logger.warning("aggregate: cache read failed (\(error)); fetching live")
            return nil
        }
    }

    /// A cache write that fails costs the next run a request, never this run its cards.
    private func write(_ body: () async throws -> Void) async {
        do {
            try await body()
        } catch {
            logger.warning("aggregate: cache write failed: \(error)")
        }
    }
}

/// The `cache` fallback tier: whatever was stored last, however old. Remembers the
/// oldest response it served so the run can say how stale it was.
final class StaleCacheTransport: HTTPTransport {
    private let store: StateStore
    private let oldest = Mutex<Date?>(nil)

    init(store: StateStore) {
        self.store = store
    }

    var oldestServed: Date? { oldest.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let cached = try? await store.cachedResponse(for: request.url) else {
            throw SourceError.failed("no cached response")
        }
        oldest.withLock { $0 = min($0 ?? cached.fetchedAt, cached.fetchedAt) }
        return HTTPResponse(status: cached.status, headers: [:], body: cached.body, url: request.url)
    }
}
