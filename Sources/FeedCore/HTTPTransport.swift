import Foundation

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
}
