import Crypto
import FeedCore
import Foundation

/// Where HTTP responses are kept between runs, with what is needed to revalidate them.
/// Implementations: ``InMemoryResponseCache`` (tests), ``SQLiteResponseCache`` (one
/// machine), ``PostgresResponseCache`` (shared). Every write is atomic on its own.
public protocol ResponseCache: Sendable {
    /// The stored response under `key` (``ResponseCacheKey``), if any. An entry that
    /// cannot be read back whole is a miss, never an error the run must handle.
    func response(forKey key: String) async throws -> CachedResponse?
    /// Stores a response (replacing one under the same key); its `storedAt` marks a new body.
    func put(_ response: CachedResponse) async throws
    /// Marks the stored response fresh again after a 304: same body, new `fetchedAt`.
    func touch(key: String, fetchedAt: Date, maxAge: Double?) async throws
    /// Drops the stored response (its body no longer parses).
    func forget(key: String) async throws
    /// When the body under `key` was stored and last confirmed, and its validators,
    /// without reading the body.
    func stamp(key: String) async throws -> CacheStamp?
    /// The random secret this cache's keys are hashed with (``RequestIdentity``): made by
    /// the first process that asks, the same for every process sharing the cache after.
    func identitySecret() async throws -> Data
    /// Applies `writes` in their order, in one transaction where the store has them: a
    /// run's writes queue up behind it (``WriteBehind``) and go a batch at a time, since
    /// a transaction per response cost more than writing the responses.
    func apply(_ writes: [CacheWrite]) async throws
}

/// One write of ``ResponseCache/apply(_:)``.
public enum CacheWrite: Sendable, Equatable {
    case put(CachedResponse)
    case touch(key: String, fetchedAt: Date, maxAge: Double?)
    case forget(key: String)

    /// The cache key the write is to.
    public var key: String {
        switch self {
        case .put(let response): response.key
        case .touch(let key, _, _), .forget(let key): key
        }
    }
}

extension ResponseCache {
    /// One write after another.
    public func apply(_ writes: [CacheWrite]) async throws {
        for write in writes {
            switch write {
            case .put(let response): try await put(response)
            case .touch(let key, let fetchedAt, let maxAge): try await touch(key: key, fetchedAt: fetchedAt, maxAge: maxAge)
            case .forget(let key): try await forget(key: key)
            }
        }
    }
}

/// Pages as their source mapped them (``PageMemo``), so a warm run reads cards instead of
/// decoding upstream JSON again. Its own seam: it knows nothing of HTTP, and the cache
/// knows nothing of it. Implementations: ``InMemoryPageMemoStore``, ``SQLitePageMemoStore``,
/// ``PostgresResponseCache``.
public protocol PageMemoStore: Sendable {
    /// The remembered page under `key`, if any; one that cannot be read back is a miss.
    func page(forKey key: String) async throws -> MappedPageRecord?
    /// What the page under `key` was read from (``MappedPageRecord/responses``), without
    /// reading the page.
    func responses(forKey key: String) async throws -> [String: Double]?
    /// Remembers a page, and drops pages not rewritten for ``MappedPageRecord/lifetime``
    /// (those of an old build or a source no longer configured would otherwise stay).
    func put(_ page: MappedPageRecord) async throws
    /// Remembers several pages as ``put(_:)-(MappedPageRecord)`` does, in one transaction
    /// where the store has them.
    func put(_ pages: [MappedPageRecord]) async throws
}

extension PageMemoStore {
    /// Read with the page, where the store cannot read one without the other.
    public func responses(forKey key: String) async throws -> [String: Double]? {
        try await page(forKey: key)?.responses
    }

    /// One page after another.
    public func put(_ pages: [MappedPageRecord]) async throws {
        for page in pages { try await put(page) }
    }
}

/// A stored response and what is needed to revalidate it.
public struct CachedResponse: Sendable, Equatable {
    public var key: String
    /// The URL with secrets redacted (the key never holds a secret either).
    public var url: String
    public var status: Int
    public var etag: String?
    public var lastModified: String?
    /// The upstream's `Cache-Control: max-age`, when it sent one.
    public var maxAge: Double?
    public var body: Data
    /// When the upstream last confirmed this body (a 304 moves it).
    public var fetchedAt: Date
    /// When this body was stored (only a new body moves it).
    public var storedAt: Date
    /// The response's `Link` header, which paging may depend on.
    public var link: String?
    /// What the body holds (``BodyDigest``), made when it was fetched; nil for a body stored
    /// by an earlier version.
    public var digest: String?

    public init(key: String, url: String, status: Int, etag: String? = nil, lastModified: String? = nil,
                maxAge: Double? = nil, body: Data, fetchedAt: Date, storedAt: Date? = nil, link: String? = nil, digest: String? = nil) {
        self.key = key
        self.url = url
        self.status = status
        self.etag = etag
        self.lastModified = lastModified
        self.maxAge = maxAge
        self.body = body
        self.fetchedAt = fetchedAt
        self.storedAt = storedAt ?? fetchedAt
        self.link = link
        self.digest = digest
    }

    /// `response` as it is stored under `key` for `url`, fetched at `date`.
    public init(_ response: HTTPResponse, key: String, for url: URL, at date: Date) {
        self.init(key: key, url: url.redactedString, status: response.status,
                  etag: response.headers["etag"], lastModified: response.headers["last-modified"],
                  maxAge: CacheControl.maxAge(response.headers["cache-control"]), body: response.body,
                  fetchedAt: date, link: response.headers["link"])
    }

    /// The stored headers a source may read.
    public var headers: [String: String] {
        link.map { ["link": $0] } ?? [:]
    }
}

/// A stored response's times, in seconds since 1970 (compared exactly).
public struct CacheStamp: Sendable, Equatable {
    public var storedAt: Double
    public var fetchedAt: Double
    public var maxAge: Double?
    /// The validators to revalidate the body with.
    public var etag: String?
    public var lastModified: String?
    /// What the body holds (``CachedResponse/digest``).
    public var digest: String?

    public init(storedAt: Double, fetchedAt: Double, maxAge: Double?, etag: String? = nil, lastModified: String? = nil, digest: String? = nil) {
        self.storedAt = storedAt
        self.fetchedAt = fetchedAt
        self.maxAge = maxAge
        self.etag = etag
        self.lastModified = lastModified
        self.digest = digest
    }

    /// The stamp of `response`.
    public init(_ response: CachedResponse) {
        self.init(storedAt: response.storedAt.timeIntervalSince1970, fetchedAt: response.fetchedAt.timeIntervalSince1970,
                  maxAge: response.maxAge, etag: response.etag, lastModified: response.lastModified, digest: response.digest)
    }

    /// Whether the body may still be served without asking the upstream: younger than the
    /// source's `cache_ttl`, and than the upstream's `max-age` when it sent a shorter one.
    public func isFresh(ttl: Double, now: Date = Date()) -> Bool {
        now.timeIntervalSince1970 - fetchedAt < min(ttl, maxAge ?? ttl)
    }
}

/// A page as its source mapped it, with the `storedAt` stamp of every response it was
/// read from (it is valid only while each of those bodies is still the stored one).
public struct MappedPageRecord: Sendable, Equatable {
    public var key: String
    public var responses: [String: Double]
    public var page: Data
    public var created: Date

    public init(key: String, responses: [String: Double], page: Data, created: Date) {
        self.key = key
        self.responses = responses
        self.page = page
        self.created = created
    }

    /// How long a page not rewritten is kept.
    public static let lifetime: Double = 7 * 86_400

    /// The response stamps as stored text (JSON, sorted keys: one text per set of stamps).
    public var responsesText: String { Self.text(of: responses) }

    /// `responses` as stored text.
    public static func text(of responses: [String: Double]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(responses)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// Stamps read back from ``responsesText``; nil when they do not decode.
    public static func responses(fromText text: String) -> [String: Double]? {
        try? JSONDecoder().decode([String: Double].self, from: Data(text.utf8))
    }
}

/// A body's contents named in 32 hex digits (the first half of its SHA-256): a listing
/// read from bodies is named by what they hold (``LiveListing/tag``), so the same bytes
/// fetched again — a cold cache, an upstream without validators — are known for the
/// listing the card store merged last.
public enum BodyDigest {
    public static func of(_ body: Data) -> String {
        Hex.lowercase(SHA256.hash(data: body).prefix(16))
    }
}

/// The parts of `Cache-Control` the cache uses.
package enum CacheControl {
    /// `max-age=N` in seconds; `no-cache`/`no-store` count as 0.
    package static func maxAge(_ header: String?) -> Double? {
        guard let header else { return nil }
        for directive in header.lowercased().split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if directive == "no-cache" || directive == "no-store" { return 0 }
            if directive.hasPrefix("max-age="), let seconds = Double(directive.dropFirst("max-age=".count)) {
                return max(0, seconds)
            }
        }
        return nil
    }
}
