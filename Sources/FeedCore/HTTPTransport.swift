import Foundation
import JSONTape

/// One HTTP GET as a source asks for it. The engine adds the source's configured
/// headers, timeout, retries and caching; a source only names the URL.
public struct HTTPRequest: Sendable, Hashable {
    public var url: URL
    public var headers: [String: String]

    public init(url: URL, headers: [String: String] = [:]) {
        self.url = url
        self.headers = headers
    }
}

/// A complete HTTP response. Header names are lower-cased.
public struct HTTPResponse: Sendable, Hashable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data
    /// The URL that answered (after redirects).
    public var url: URL

    public init(status: Int, headers: [String: String] = [:], body: Data, url: URL) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    public var isSuccess: Bool { (200..<300).contains(status) }
}

/// How a source reaches its upstream. Implemented by the engine (live HTTP, cache,
/// recorded snapshots); a source never knows which one it is talking to.
public protocol HTTPTransport: Sendable {
    /// Performs the request and returns the response whatever its status. Throws a
    /// ``SourceError`` only when no usable response arrived (timeout, transport failure).
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

extension HTTPTransport {
    /// GET `url`, any status.
    public func get(_ url: URL) async throws -> HTTPResponse {
        try await send(HTTPRequest(url: url))
    }

    /// GET `url` and decode a 2xx body as `T`. Other statuses throw
    /// ``SourceError/badStatus(_:)``; a body that does not decode throws
    /// ``SourceError/undecodable(path:reason:)`` naming the JSON path.
    public func getJSON<T: Decodable>(_ type: T.Type, from url: URL) async throws -> T {
        let response = try await get(url)
        guard response.isSuccess else { throw SourceError.badStatus(response.status) }
        return try JSONBody.decode(type, from: response.body)
    }
}

/// Decoding of upstream bodies with errors in plain words.
public enum JSONBody {
    /// Whether the tape decoder (the `JSONTape` target) reads bodies first. Set
    /// `AGGREGATE_JSON_DECODER=foundation` to use Foundation's `JSONDecoder` alone: to
    /// rule the tape out when a body decodes strangely (CI runs the source tests both ways).
    public static let usesTape = ProcessInfo.processInfo.environment["AGGREGATE_JSON_DECODER"] != "foundation"

    /// The body as a ``JSONValue``, keeping at most `limit` records of the list at the
    /// object keys `path`: a source that will use only `limit` cards does not build the
    /// rest. (With `AGGREGATE_JSON_DECODER=foundation`, or a body the tape leaves to
    /// Foundation, the whole body is decoded and the list cut after.)
    public static func value(from body: Data, keepingAtMost limit: Int, ofListAt path: [String]) throws -> JSONValue {
        if usesTape, let tree = TapeDecoding.tree(JSONValue.self, from: body, keepingAtMost: limit, ofArrayAt: path) {
            return tree
        }
        return try decode(JSONValue.self, from: body).keepingAtMost(limit, ofListAt: path[...])
    }

    /// Decodes `T`, turning `DecodingError` into ``SourceError/undecodable(path:reason:)``.
    public static func decode<T: Decodable>(_ type: T.Type, from body: Data) throws -> T {
        // The tape decodes what it is sure to read as Foundation would; errors and
        // anything unusual go to Foundation, whose verdict and words stand.
        if usesTape, case .decoded(let value) = TapeDecoding.decode(type, from: body) { return value }
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch let error as DecodingError {
            let raw = try? JSONDecoder().decode(JSONValue.self, from: body)
            guard let raw else {
                // JSON but for bytes that are not UTF-8 is a different fault from an HTML page.
                let repaired = Data(String(decoding: body, as: UTF8.self).utf8)
                let onlyEncoding = String(data: body, encoding: .utf8) == nil
                    && (try? JSONDecoder().decode(JSONValue.self, from: repaired)) != nil
                let reason = onlyEncoding
                    ? "the body is not UTF-8 text (\(body.count) bytes)" : "the body is not JSON (\(body.count) bytes)"
                throw SourceError.undecodable(path: "", reason: reason)
            }
            let problem = DecodingProblem(error, in: raw)
            throw SourceError.undecodable(path: problem.path, reason: problem.reason)
        }
    }
}
