import FeedCore
import Foundation

/// Serves a source module's recorded responses, for exactly the URLs they were
/// recorded from. Opens no socket.
struct SnapshotTransport: HTTPTransport {
    let recordings: [String: RecordedResponse]

    init(_ recordings: [RecordedResponse]) {
        self.recordings = Dictionary(recordings.map { ($0.url, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func send(_ request: FeedCore.HTTPRequest) async throws -> HTTPResponse {
        guard let recorded = recordings[request.url.absoluteString] else {
            throw SourceError.failed("no recorded response for this URL")
        }
        return HTTPResponse(status: recorded.status, headers: ["content-type": "application/json"],
                            body: recorded.body, url: request.url)
    }
}
