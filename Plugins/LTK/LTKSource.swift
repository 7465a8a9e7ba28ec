import FeedCore
import FeedSupport
import Foundation

/// rewardStyle's LTK featured feed: `GET {url}` (`?featured=true&limit=20`) returns posts
/// with their products and profiles in sibling arrays, and `meta.next_url` for the next
/// page. The feed is effectively endless; the engine's budget ends the walk. The cursor
/// is `next_url` itself.
public struct LTKSource: FeedSource {
    public static let plugin = "ltk"

    public static let upstreamURL = "https://api-gateway.rewardstyle.com/api/ltk/v2/ltks/?featured=true&limit=20"

    /// Generated from the real shapes (see Snapshots/README.md): four pages chained by
    /// `next_url`, each recorded under the URL that asks for it.
    public static let snapshots: [RecordedResponse] = {
        let pages = [PackageResources.page1_json, PackageResources.page2_json, PackageResources.page3_json,
                     PackageResources.page4_json].map { Data($0) }
        var url = upstreamURL
        var recorded: [RecordedResponse] = []
        for page in pages {
            recorded.append(RecordedResponse(url: url, body: page))
            guard let next = (try? JSONDecoder().decode(LTKFeed.self, from: page))?.meta?.next_url else { break }
            url = next
        }
        return recorded
    }()

    let settings: SourceSettings
    let http: any HTTPTransport

    public init(settings: SourceSettings, http: any HTTPTransport) throws {
        try settings.optionsReader().finish(allowedKeys: [])
        self.settings = settings
        self.http = http
    }

    public func page(after cursor: String?) async throws -> SourcePage {
        let url = try cursor.map(nextURL) ?? settings.url
        let feed = try await http.getJSON(LTKFeed.self, from: url, with: settings.json)
        var notes: [String] = []
        let cards = LTKMapping.cards(for: feed, source: settings.id, notes: &notes)
        let skipped = feed.ltks.skipped + (feed.products?.skipped ?? []) + (feed.profiles?.skipped ?? [])
        return SourcePage(cards: cards, next: feed.meta?.next_url, total: feed.meta?.total_results,
                          skipped: skipped, notes: notes)
    }

    /// `next_url` as a URL on the configured host: the feed never sends us elsewhere.
    private func nextURL(_ cursor: String) throws -> URL {
        guard let url = URL(string: cursor), url.scheme == settings.url.scheme, url.host == settings.url.host,
              url.port == settings.url.port else {
            throw SourceError.failed("meta.next_url \"\(cursor)\" is not on \(settings.url.host ?? "the configured host"); stopped")
        }
        return url
    }
}
