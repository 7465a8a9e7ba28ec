import FeedConfig
import FeedCore
import FeedState
import FeedSupport
import Foundation
import Logging
import Synchronization

/// The live tier's cache: a response younger than the TTL is served without a request;
/// an older one is revalidated with `If-None-Match`/`If-Modified-Since` (a 304 serves
/// the stored body). Nothing is written while the source is reading: only once the source
/// has parsed what it got (``settle(parsed:)``) does a good response enter the cache, so
/// a broken 200 (an HTML error page, invalid UTF-8) never replaces the last good copy,
/// and a stored body that no longer parses is dropped instead of being served again.
final class CachingTransport: HTTPTransport {
    /// What one call of the source touched, applied when it settles.
    private enum Pending {
        /// With what the body holds, hashed beside the source's decoding of it.
        case fetched(URL, key: String, HTTPResponse, digest: Task<String, Never>?)
        case revalidated(key: String, storedAt: Date, digest: String?)
        case servedFromCache(key: String, storedAt: Date, digest: String?)
    }

    let network: any HTTPTransport
    let store: any ResponseCache
    let keys: CacheKeys
    /// The source's `cache_ttl`; the upstream's `max-age` wins when shorter.
    let ttl: Double
    /// `--refresh`: ignore the TTL, but still revalidate.
    let refresh: Bool
    let logger: Logger
    /// Where the writes go: behind the run, in order (``WriteBehind``).
    let writes: WriteBehind
    /// Whether what each fetched body holds is named (``BodyDigest``, for the listing the
    /// card store records): not for a source the run does not record, whose hashing of every
    /// body (25 MB in 14 ms) would buy nothing.
    let namesBodies: Bool
    private let pending = Mutex<[Pending]>([])
    /// Stored bodies the source could not read: for the rest of this run they are misses
    /// (the pager's second try goes to the network, not to the same damaged copy).
    private let distrusted = Mutex<Set<String>>([])
    /// The stored body a remembered page was mapped from, expected by the next request
    /// (``expectUnchanged(key:storedAt:)``), and whether the upstream confirmed it.
    private let expected = Mutex<(key: String, storedAt: Double)?>(nil)
    private let confirmed = Mutex(false)
    /// What the bodies read since ``takeDigests()`` hold, by cache key (``BodyDigest``).
    private let digests = Mutex<[String: String]>([:])

    /// Thrown to the source when the upstream confirmed the body its remembered page was
    /// mapped from: the pager serves that page instead of having the same bytes mapped again.
    struct RememberedBodyConfirmed: Error {}

    init(network: any HTTPTransport, store: any ResponseCache, keys: CacheKeys, ttl: Double, refresh: Bool, logger: Logger,
         writes: WriteBehind, namesBodies: Bool = true) {
        self.network = network
        self.writes = writes
        self.namesBodies = namesBodies
        self.store = store
        self.keys = keys
        self.ttl = ttl
        self.refresh = refresh
        self.logger = logger
    }

    /// The next request is expected to be for the stored body under `key` with stamp
    /// `storedAt`: when the upstream confirms it (or it is still fresh), the request throws
    /// ``RememberedBodyConfirmed`` instead of answering, and ``takeConfirmation()`` says so.
    func expectUnchanged(key: String, storedAt: Double) {
        expected.withLock { $0 = (key, storedAt) }
        confirmed.withLock { $0 = false }
    }

    /// Whether the expected body was confirmed since ``expectUnchanged(key:storedAt:)``;
    /// clears the expectation.
    func takeConfirmation() -> Bool {
        expected.withLock { $0 = nil }
        return confirmed.withLock { value in
            defer { value = false }
            return value
        }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let key = keys.key(for: request)
        // Only a page's first request can stand for the page.
        let expected = expected.withLock { value in
            defer { value = nil }
            return value
        }
        // The body a remembered page was mapped from is revalidated by its stamp alone: a
        // confirmation needs no body (reading 500 feeds' bodies only to drop them was a fifth
        // of a warm refresh).
        if let expected, expected.key == key, let stamp = await stamp(key), stamp.storedAt == expected.storedAt {
            let storedAt = Date(timeIntervalSince1970: stamp.storedAt)
            if !refresh, stamp.isFresh(ttl: ttl) {
                pending.withLock { $0.append(.servedFromCache(key: key, storedAt: storedAt, digest: stamp.digest)) }
                throw confirmRemembered()
            }
            let response = try await network.send(Self.conditional(request, etag: stamp.etag, lastModified: stamp.lastModified))
            if response.status == 304 {
                writes.touch(key: key, fetchedAt: Date(), maxAge: CacheControl.maxAge(response.headers["cache-control"]))
                pending.withLock { $0.append(.revalidated(key: key, storedAt: storedAt, digest: stamp.digest)) }
                throw confirmRemembered()
            }
            return fetched(response, for: request, key: key)
        }
        let cached = await lookup(key)
        if let cached, !refresh, CacheStamp(cached).isFresh(ttl: ttl) {
            pending.withLock { $0.append(.servedFromCache(key: key, storedAt: cached.storedAt, digest: cached.digest)) }
            return HTTPResponse(status: cached.status, headers: cached.headers, body: cached.body, url: request.url)
        }
        let response = try await network.send(Self.conditional(request, etag: cached?.etag, lastModified: cached?.lastModified))
        if response.status == 304, let cached {
            // The upstream confirmed the stored body, which parsed when it was stored: it is
            // fresh again now, not once this source has parsed it, so that every run starting
            // meanwhile (`serve`) reads it instead of revalidating it again. A body that no
            // longer parses is still forgotten when the call settles.
            confirm(cached, headers: response.headers)
            pending.withLock { $0.append(.revalidated(key: key, storedAt: cached.storedAt, digest: cached.digest)) }
            return HTTPResponse(status: cached.status, headers: cached.headers.merging(response.headers) { _, fresh in fresh },
                                body: cached.body, url: request.url)
        }
        return fetched(response, for: request, key: key)
    }

    private static func conditional(_ request: HTTPRequest, etag: String?, lastModified: String?) -> HTTPRequest {
        var conditional = request
        if let etag { conditional.headers["If-None-Match"] = etag }
        if let lastModified { conditional.headers["If-Modified-Since"] = lastModified }
        return conditional
    }

    /// A response from the network, to be stored once the source has read it.
    private func fetched(_ response: HTTPResponse, for request: HTTPRequest, key: String) -> HTTPResponse {
        if response.isSuccess {
            // Hashed on another thread while the source decodes the body: 11 ms of a 20 MB
            // body were on the run's path when the hash came after the decoding.
            let body = response.body
            let digest = namesBodies ? Task.detached(priority: .medium) { BodyDigest.of(body) } : nil
            pending.withLock { $0.append(.fetched(request.url, key: key, response, digest: digest)) }
        }
        return response
    }

    /// Called once the source has read what this transport gave it: `parsed` stores the
    /// fetched responses and refreshes revalidated ones; otherwise nothing is stored and
    /// a cached body the source could not read is forgotten. The writes are queued on
    /// ``writes``, not awaited. Returns the stored bodies the call read, by cache key,
    /// with their `storedAt` stamps: when `parsed`, what a page mapped from them depends
    /// on (``PageMemo``); otherwise the ones now dropped, which a second try fetches.
    func settle(parsed: Bool) async -> [String: Double] {
        let touched = pending.withLock { list in
            defer { list = [] }
            return list
        }
        let now = Date()
        var read: [String: Double] = [:]
        for item in touched {
            switch item {
            case .fetched(let url, let key, let response, let digest) where parsed:
                var cached = CachedResponse(response, key: key, for: url, at: now)
                cached.digest = await digest?.value
                read[cached.key] = cached.storedAt.timeIntervalSince1970
                digests.withLock { $0[key] = cached.digest }
                writes.store(cached)
            case .revalidated(let key, let storedAt, let digest) where parsed, .servedFromCache(let key, let storedAt, let digest) where parsed:
                read[key] = storedAt.timeIntervalSince1970
                digests.withLock { $0[key] = digest }
            case .revalidated(let key, let storedAt, _), .servedFromCache(let key, let storedAt, _):
                read[key] = storedAt.timeIntervalSince1970
                distrusted.withLock { _ = $0.insert(key) }
                writes.forget(key: key)
            case .fetched(_, _, _, let digest):
                digest?.cancel()
            }
        }
        return read
    }

    /// What each body read since the last call holds (``BodyDigest``), by cache key, where it
    /// is known: a listing is named by what its bodies hold (``LiveListing/tag``).
    func takeDigests() -> [String: String] {
        digests.withLock { value in
            defer { value = [:] }
            return value
        }
    }

    private func confirmRemembered() -> RememberedBodyConfirmed {
        confirmed.withLock { $0 = true }
        return RememberedBodyConfirmed()
    }

    /// Marks `cached` fresh as of now: answered from ``WriteBehind`` at once, written behind.
    private func confirm(_ cached: CachedResponse, headers: [String: String]) {
        var fresh = cached
        fresh.fetchedAt = Date()
        fresh.maxAge = CacheControl.maxAge(headers["cache-control"])
        writes.confirm(fresh)
    }

    /// The stamp of the stored body under `key`, without reading the body.
    private func stamp(_ key: String) async -> CacheStamp? {
        if distrusted.withLock({ $0.contains(key) }) { return nil }
        if let storing = writes.response(forKey: key) { return CacheStamp(storing) }
        return try? await store.stamp(key: key)
    }

    private func lookup(_ key: String) async -> CachedResponse? {
        if distrusted.withLock({ $0.contains(key) }) { return nil }
        if let storing = writes.response(forKey: key) { return storing }
        do {
            return try await store.response(forKey: key)
        } catch {
            logger.warning("aggregate: cache read failed (\(PlainWords.describe(error))); fetching live")
            return nil
        }
    }
}

/// The `cache` fallback tier: whatever was stored last, however old. Remembers the
/// oldest response it served so the run can say how stale it was.
final class StaleCacheTransport: HTTPTransport {
    private let store: any ResponseCache
    private let keys: CacheKeys
    private let oldest = Mutex<Date?>(nil)

    init(store: any ResponseCache, keys: CacheKeys) {
        self.store = store
        self.keys = keys
    }

    var oldestServed: Date? { oldest.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let cached = try? await store.response(forKey: keys.key(for: request)) else {
            throw SourceError.failed("no cached response")
        }
        oldest.withLock { $0 = min($0 ?? cached.fetchedAt, cached.fetchedAt) }
        return HTTPResponse(status: cached.status, headers: cached.headers, body: cached.body, url: request.url)
    }
}

/// One source's cache keys (``RequestIdentity``): its id and configured headers with
/// the cache's identity.
struct CacheKeys: Sendable {
    let sourceID: String
    /// The source's configured headers, which the network tier adds below the cache.
    let headers: [String: String]
    let identity: RequestIdentity

    init(source: SourceConfig, identity: RequestIdentity) {
        sourceID = source.id
        headers = source.headers
        self.identity = identity
    }

    func key(for request: HTTPRequest) -> String {
        identity.cacheKey(source: sourceID, request: request, headers: headers)
    }
}

