import FeedCore
import Foundation

/// A request as an upstream fixture sees it.
public struct FixtureRequest: Sendable {
    /// The path below the upstream's prefix (`/deals/1` for `/target/deals/1`).
    public var path: String
    public var query: [String: String]
    /// The server's own base URL, for links that must point back at it.
    public var baseURL: URL
    public var headers: [String: String]

    public init(path: String, query: [String: String] = [:], baseURL: URL, headers: [String: String] = [:]) {
        self.path = path
        self.query = query
        self.baseURL = baseURL
        self.headers = headers
    }
}

/// What an upstream fixture answers.
public struct FixtureResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: Data
    /// More response headers (`Link`).
    public var headers: [String: String]

    public init(status: Int = 200, contentType: String = "application/json; charset=utf-8", body: Data,
                headers: [String: String] = [:]) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    public static func json(_ body: Data, status: Int = 200) -> FixtureResponse {
        FixtureResponse(status: status, body: body)
    }

    /// `value` as compact JSON with sorted keys, the way the fixture routes answer.
    public static func json(_ value: JSONValue, status: Int = 200) -> FixtureResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return FixtureResponse(status: status, body: (try? encoder.encode(value)) ?? Data())
    }

    public static let notFound = FixtureResponse(status: 404, body: Data(#"{"error":"not found"}"#.utf8))
}

/// One upstream played by the fixture server, under its own path prefix.
public protocol FixtureUpstream: Sendable {
    /// The route name in scenarios and the request log (`cabify`), and the path prefix
    /// (`/cabify`).
    var name: String { get }
    /// The answer for a GET below the prefix; `nil` for a path it does not serve.
    func respond(to request: FixtureRequest) -> FixtureResponse?
}
