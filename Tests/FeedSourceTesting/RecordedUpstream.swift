import FeedCore
import Foundation

/// The network as a source module's tests see it: fixed responses by absolute URL, and
/// one answer (404 by default) for every other URL.
public struct RecordedUpstream: HTTPTransport {
    public var responses: [String: (status: Int, body: Data)]
    public var otherwise: (status: Int, body: Data)

    public init(_ responses: [String: (status: Int, body: Data)], otherwise: (status: Int, body: Data) = (404, Data())) {
        self.responses = responses
        self.otherwise = otherwise
    }

    /// 200 responses with these bodies.
    public init(bodies: [String: Data], otherwise: (status: Int, body: Data) = (404, Data())) {
        self.init(bodies.mapValues { (200, $0) }, otherwise: otherwise)
    }

    /// The module's own recorded snapshots.
    public init(snapshotsOf source: any FeedSource.Type, otherwise: (status: Int, body: Data) = (404, Data())) {
        self.init(Dictionary(source.snapshots.map { ($0.url, ($0.status, $0.body)) }, uniquingKeysWith: { first, _ in first }),
                  otherwise: otherwise)
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (status, body) = responses[request.url.absoluteString] ?? otherwise
        return HTTPResponse(status: status, body: body, url: request.url)
    }
}
