import FeedCore
import Foundation

/// Serves a source module's recorded responses for the URLs they were recorded from
/// (query parameters in any order). Opens no socket.
struct SnapshotTransport: HTTPTransport {
    let recordings: [String: RecordedResponse]
    /// Whether these are every built-in source's recordings, lent to a plugin that ships
    /// none (`json`, `exec`): then a miss names only recordings from the same host.
    var borrowed = false

    init(_ recordings: [RecordedResponse], borrowed: Bool = false) {
        self.borrowed = borrowed
        self.recordings = Dictionary(recordings.compactMap { recorded in
            URL(string: recorded.url).map { (Self.key($0), recorded) }
        }, uniquingKeysWith: { first, _ in first })
    }

    /// The URL with its query parameters sorted, so `?a=1&b=2` finds `?b=2&a=1`.
    static func key(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.queryItems = components.queryItems?.sorted { ($0.name, $0.value ?? "") < ($1.name, $1.value ?? "") }
        components.fragment = nil
        return components.string ?? url.absoluteString
    }

    func send(_ request: FeedCore.HTTPRequest) async throws -> HTTPResponse {
        guard let recorded = recordings[Self.key(request.url)] else {
            let host = request.url.host ?? ""
            let known = recordings.values.map(\.url).filter { !borrowed || URL(string: $0)?.host == host }.sorted()
            let hint = known.isEmpty
                ? (borrowed ? "nothing was recorded from \(host)" : "this source has no recordings")
                : "recorded: \(known[0])\(known.count > 1 ? " and \(known.count - 1) more" : "")"
            throw SourceError.failed("no recorded response for this URL; \(hint)")
        }
        return HTTPResponse(status: recorded.status, headers: ["content-type": "application/json"],
                            body: recorded.body, url: request.url)
    }
}
