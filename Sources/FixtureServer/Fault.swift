import Foundation

/// How the fixture server misbehaves for one request of one route. An empty fault is a
/// normal response. Decoded from the scenario file of `fixture-server --scenario`.
public struct Fault: Codable, Sendable, Equatable {
    /// Wait this long before answering.
    public var latencyMs: Int?
    /// Answer with this status (and a small JSON error body) instead of the data.
    public var status: Int?
    /// A `Retry-After` header, as written (`"1"` or an HTTP-date).
    public var retryAfter: String?
    /// Replace the body with this text.
    public var body: String?
    /// Cut the JSON body in half (a valid HTTP response with broken JSON).
    public var malformedJSON: Bool?
    /// Announce the full `Content-Length`, send half, close the connection.
    public var truncate: Bool?
    /// Send the body at this many bytes per second.
    public var dripBytesPerSecond: Int?
    /// Send a body of this many bytes instead of the data.
    public var oversizeBytes: Int?
    /// Put a byte that is not UTF-8 into the first string of the body.
    public var invalidUTF8: Bool?
    /// Send this `ETag`, and answer 304 when `If-None-Match` matches it.
    public var etag: String?
    /// Send this `Last-Modified`, and answer 304 when `If-Modified-Since` equals it.
    public var lastModified: String?
    /// Send `Cache-Control: max-age=N`.
    public var maxAge: Int?
    /// Redirect to the same URL, forever.
    public var redirectLoop: Bool?
    /// Answer `302 Found` with this `Location` (absolute, or relative to the request).
    public var redirectTo: String?
    /// Send the body gzip-encoded (`Content-Encoding: gzip`).
    public var gzip: Bool?

    public init(latencyMs: Int? = nil, status: Int? = nil, retryAfter: String? = nil, body: String? = nil,
                malformedJSON: Bool? = nil, truncate: Bool? = nil, dripBytesPerSecond: Int? = nil,
                oversizeBytes: Int? = nil, invalidUTF8: Bool? = nil, etag: String? = nil, lastModified: String? = nil,
                maxAge: Int? = nil, redirectLoop: Bool? = nil, redirectTo: String? = nil, gzip: Bool? = nil) {
        self.latencyMs = latencyMs
        self.status = status
        self.retryAfter = retryAfter
        self.body = body
        self.malformedJSON = malformedJSON
        self.truncate = truncate
        self.dripBytesPerSecond = dripBytesPerSecond
        self.oversizeBytes = oversizeBytes
        self.invalidUTF8 = invalidUTF8
        self.etag = etag
        self.lastModified = lastModified
        self.maxAge = maxAge
        self.redirectLoop = redirectLoop
        self.redirectTo = redirectTo
        self.gzip = gzip
    }

    /// A normal response.
    public static let none = Fault()
}

/// One request as the server saw it, for tests to assert on.
public struct LoggedRequest: Codable, Sendable {
    /// The upstream that answered (`cabify`), or `unknown`.
    public var route: String
    public var path: String
    public var query: String?
    /// Lower-cased header names.
    public var headers: [String: String]
    public var arrival: Date
    public var finish: Date
    public var status: Int
}

/// One POST the webhook sink accepted (`POST /_sink/NAME`, for delivery tests).
public struct SinkDelivery: Codable, Sendable {
    public var sink: String
    /// The `Idempotency-Key` header, if it had one.
    public var idempotencyKey: String?
    /// Lower-cased header names.
    public var headers: [String: String]
    public var body: String
    public var arrival: Date
}
