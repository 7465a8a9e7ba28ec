import FeedConfig
import FeedCore
import FeedEngine
import FeedSupport
import Foundation
import Synchronization

/// A source module for engine tests: its pages are JSON bodies that ``MemoryUpstream``
/// serves by URL, so the engine drives it exactly as it drives a real module.
struct MemorySource: FeedSource {
    static let plugin = "memory"
    static let snapshots: [RecordedResponse] = []

    struct Page: Codable {
        var cards: [Card]
        var next: String?
    }

    let settings: SourceSettings
    let http: any HTTPTransport

    init(settings: SourceSettings, http: any HTTPTransport) throws {
        let options = settings.optionsReader()
        _ = options.integer("size", minimum: 0)
        try options.finish(allowedKeys: ["size"])
        self.settings = settings
        self.http = http
    }

    func page(after cursor: String?) async throws -> SourcePage {
        let url = settings.url.appending(queryItems: [URLQueryItem(name: "page", value: cursor ?? "1")])
        let page = try await http.getJSON(Page.self, from: url, with: settings.json)
        return SourcePage(cards: page.cards, next: page.next)
    }
}

/// The in-memory "network" behind ``MemorySource``: pages by URL, and a count of every
/// request it answered.
final class MemoryUpstream: TransportProvider, HTTPTransport {
    private let pages: [String: Data]
    private let log = Mutex<[String]>([])

    /// `cardsBySource[id]` split into pages of `pageSize`, served under
    /// `https://memory.test/<id>?page=N`.
    init(_ cardsBySource: [String: [Card]], pageSize: Int) {
        var pages: [String: Data] = [:]
        let encoder = JSONEncoder()
        for (id, cards) in cardsBySource {
            let chunks = stride(from: 0, to: max(cards.count, 1), by: pageSize).map {
                Array(cards[$0..<min($0 + pageSize, cards.count)])
            }
            for (index, chunk) in chunks.enumerated() {
                let next = index + 1 < chunks.count ? "\(index + 2)" : nil
                pages["https://memory.test/\(id)?page=\(index + 1)"] =
                    try? encoder.encode(MemorySource.Page(cards: chunk, next: next))
            }
        }
        self.pages = pages
    }

    var requests: [String] { log.withLock { $0 } }

    func requests(for id: String) -> Int {
        requests.filter { $0.hasPrefix("https://memory.test/\(id)?") }.count
    }

    func tiers(for source: SourceConfig, plugin: any FeedSource.Type) -> [TransportTier] {
        [TransportTier(origin: nil, transport: self)]
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        log.withLock { $0.append(request.url.absoluteString) }
        guard let body = pages[request.url.absoluteString] else {
            return HTTPResponse(status: 404, body: Data(), url: request.url)
        }
        return HTTPResponse(status: 200, body: body, url: request.url)
    }
}

extension FeedConfig {
    /// A config of memory sources with these ids, in this order.
    static func memory(_ ids: [String]) -> FeedConfig {
        FeedConfig(file: "Sources.yml", sources: ids.enumerated().map { index, id in
            // No deadline to speak of: a loaded machine running every test at once once
            // took over a minute for one of these runs, and the deadline cut its last page.
            SourceConfig(id: id, plugin: MemorySource.plugin, url: URL(string: "https://memory.test/\(id)")!,
                         maxPages: 1000, deadline: 86_400, path: "sources[\(index)]")
        })
    }
}
