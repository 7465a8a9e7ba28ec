import FeedConfig
import FeedCore
import FeedSupport
import Foundation
import Logging
import Synchronization

/// Records what a source really receives from its live upstream, as snapshot files for
/// its `Snapshots/` folder: `aggregate record`. The source walks its pages exactly as in
/// a run (same URLs, headers, retries), so the recordings answer the URLs it asks for.
public struct SnapshotRecorder: Sendable {
    /// One recorded response and the file name it is saved under.
    public struct Recording: Sendable {
        public var url: URL
        public var status: Int
        public var body: Data
        public var fileName: String
    }

    let config: SourceConfig
    let type: any FeedSource.Type
    let network: any HTTPTransport

    public init(config: SourceConfig, type: any FeedSource.Type, live: LiveHTTPTransport, logger: Logger) {
        self.config = config
        self.type = type
        self.network = RetryingTransport(base: TimedLiveTransport(live: live, timeout: config.timeout, maxBody: config.maxBody), sourceID: config.id, headers: config.headers,
                                         policy: RetryPolicy(attempts: config.retries), logger: logger)
    }

    /// Walks up to `pages` pages, then asks for the detail of each of `detailIDs`.
    public func record(pages: Int, detailIDs: [String]) async throws -> [Recording] {
        let capture = CapturingTransport(network)
        let source = try type.init(settings: config.settings, http: capture)
        var trail = CursorTrail()
        var walked = 0
        while walked < pages {
            let page = try await source.page(after: trail.current)
            walked += 1
            guard try trail.advance(to: page.next) else { break }
        }
        for id in detailIDs {
            do {
                _ = try await source.detail(id: id)
            } catch let error as SourceError {
                // A 404 is worth recording too: it is how the upstream says "no such id".
                if case .notFound = error { continue }
                if case .noDetail = error { continue }
                if case .noDetailEndpoint = error { continue }
                throw error
            }
        }
        var used = Set<String>()
        return capture.responses.map { response in
            Recording(url: response.url, status: response.status, body: response.body,
                      fileName: Self.fileName(for: response.url, status: response.status, used: &used))
        }
    }

    /// `items.json`, `items_page-2.json`, `users_2_404.json`: from the URL's last path
    /// segment and query, letters, digits, `-` and `_` only, unique within one recording.
    static func fileName(for url: URL, status: Int, used: inout Set<String>) -> String {
        let segments = url.deletingPathExtension().pathComponents.filter { $0 != "/" }
        // `users/2` → `users_2`: a resource name must not start with a digit.
        var parts = Array(segments.suffix(segments.last?.first?.isNumber == true ? 2 : 1))
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        parts += query.filter { !Redaction.isSecretParameter($0.name) }.map { "\($0.name)-\($0.value ?? "")" }
        if status != 200 { parts.append("\(status)") }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        var stem = String(parts.joined(separator: "_").map { allowed.contains($0) ? $0 : "_" }.prefix(80))
        if stem.isEmpty || stem == "_" { stem = "response" }
        var name = stem + ".json"
        var counter = 2
        while !used.insert(name).inserted {
            name = "\(stem)-\(counter).json"
            counter += 1
        }
        return name
    }
}

/// Passes requests on and keeps every response, in order.
final class CapturingTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let captured = Mutex<[HTTPResponse]>([])

    init(_ base: any HTTPTransport) {
        self.base = base
    }

    var responses: [HTTPResponse] { captured.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var response = try await base.send(request)
        response.url = request.url
        captured.withLock { $0.append(response) }
        return response
    }
}
