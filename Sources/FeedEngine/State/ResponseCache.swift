import FeedCore
import Foundation

/// Where responses are kept between runs: the HTTP cache, and beside each response the
/// pages a source mapped from it (``PageMemo``). Implementations: ``InMemoryResponseCache``
/// (tests), ``SQLiteResponseCache`` (one machine), ``PostgresResponseCache`` (shared).
/// Every write is atomic on its own; nothing here needs a transaction across calls.
public protocol ResponseCache: Sendable {
    /// The stored response under `key` (``ResponseCacheKey``), if any.
    func response(forKey key: String) async throws -> CachedResponse?
    /// Stores a response (replacing one under the same key); its `storedAt` marks a new body.
    func put(_ response: CachedResponse) async throws
    /// Marks the stored response fresh again after a 304: same body, new `fetchedAt`.
    func touch(key: String, fetchedAt: Date, maxAge: Double?) async throws
    /// Drops the stored response (its body no longer parses).
    func forget(key: String) async throws
    /// When the body under `key` was stored and last confirmed, without reading the body.
    func stamp(key: String) async throws -> CacheStamp?
    /// A remembered mapped page.
    func mappedPage(key: String) async throws -> MappedPageRecord?
    /// Remembers a mapped page, and drops pages not rewritten for a week (those of an old
    /// build or of a source no longer configured would otherwise stay forever).
    func putMappedPage(_ page: MappedPageRecord) async throws
    /// ``putMappedPage(_:)`` for a page whose bytes are written as they are encoded, so
    /// a store that keeps large pages as files never holds one whole in memory.
    func putMappedPage(key: String, responses: [String: Double], created: Date, page: MappedPageBytes) async throws

    /// Starts writing `body` as it arrives, while the source still reads it; nil when the
    /// store has nothing to gain. Nothing is stored until ``put(_:prepared:)`` names it.
    func prepare(body: Data) -> PreparedBody?
    /// ``put(_:)``, with the body already written by ``prepare(body:)``.
    func put(_ response: CachedResponse, prepared: PreparedBody) async throws
    /// Forgets a prepared body the source could not read.
    func discard(_ prepared: PreparedBody) async
    /// Where the network may write a large body as it arrives, so that it is written once
    /// (see ``BodySpool``); nil when the store keeps no files.
    func spool() -> BodySpool?
}

extension ResponseCache {
    public func putMappedPage(key: String, responses: [String: Double], created: Date, page: MappedPageBytes) async throws {
        try await putMappedPage(MappedPageRecord(key: key, responses: responses, page: page.gathered(), created: created))
    }

    public func prepare(body: Data) -> PreparedBody? { nil }
    public func put(_ response: CachedResponse, prepared: PreparedBody) async throws { try await put(response) }
    public func discard(_ prepared: PreparedBody) async {}
    public func spool() -> BodySpool? { nil }
}

/// A body being written ahead of its response's ``ResponseCache/put(_:prepared:)``: the
/// 20 MB grid's file is then written while it is decoded, not after.
public struct PreparedBody: Sendable {
    /// Where it was written, once it is; nil when the write failed (the put writes it again).
    let written: Task<String?, Never>
}

/// The cache key of a request: the redacted URL. No secret, nor a hash of one (a short
/// key could be guessed back from it), is stored; two URLs that differ only in a secret
/// share one entry.
public enum ResponseCacheKey {
    public static func key(for url: URL) -> String {
        url.redactedString
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

    public init(key: String, url: String, status: Int, etag: String? = nil, lastModified: String? = nil,
                maxAge: Double? = nil, body: Data, fetchedAt: Date, storedAt: Date? = nil, link: String? = nil) {
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
    }

    /// `response` as it is stored for `url`, fetched at `date`.
    public init(_ response: HTTPResponse, for url: URL, at date: Date) {
        self.init(key: ResponseCacheKey.key(for: url), url: url.redactedString, status: response.status,
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

    public init(storedAt: Double, fetchedAt: Double, maxAge: Double?) {
        self.storedAt = storedAt
        self.fetchedAt = fetchedAt
        self.maxAge = maxAge
    }
}

/// A remembered page's bytes as its encoder writes them: in order, a chunk at a time.
public struct MappedPageBytes: Sendable {
    /// Calls its argument with every chunk, in order.
    let write: @Sendable (_ chunk: (UnsafeRawBufferPointer) -> Void) -> Void

    public init(write: @escaping @Sendable (_ chunk: (UnsafeRawBufferPointer) -> Void) -> Void) {
        self.write = write
    }

    /// Bytes already whole.
    public init(_ data: Data) {
        write = { chunk in data.withUnsafeBytes { chunk($0) } }
    }

    /// Every chunk in one `Data`.
    public func gathered() -> Data {
        var data = Data()
        write { data.append(contentsOf: $0) }
        return data
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

/// When this state first saw each card: the date a feed entry without `published` keeps
/// from run to run (feed readers need a date that does not move).
public protocol FirstSeenLog: Sendable {
    /// The first-seen time of each of `ids`, recording `now` for the ones not seen before.
    /// Two processes asking at once agree on one time per card.
    func firstSeen(_ ids: [String], now: Date) async throws -> [String: Date]
}

extension FirstSeenLog {
    /// The first-seen dates of the cards in `cards` that carry no date of their own: what a
    /// feed entry shows for them.
    public func firstSeen(undatedIn cards: some Collection<Card>, now: Date = Date()) async throws -> [String: Date] {
        try await firstSeen(cards.filter { $0.published == nil }.map(\.id), now: now)
    }
}

/// The parts of `Cache-Control` the cache uses.
enum CacheControl {
    /// `max-age=N` in seconds; `no-cache`/`no-store` count as 0.
    static func maxAge(_ header: String?) -> Double? {
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
