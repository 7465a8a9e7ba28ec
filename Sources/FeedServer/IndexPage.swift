import FeedEngine
import Foundation
import Hummingbird
import Mustache
import NIOCore

/// `/`: a small page listing the feeds and sources, with links, for a person who opens
/// the server in a browser. Rendered from `Templates/index.html.mustache` (compiled in);
/// swift-mustache escapes every value.
enum IndexPage {
    private static let template = try? MustacheTemplate(string: String(decoding: PackageResources.index_html_mustache, as: UTF8.self))

    static func response(config: FeedConfig, request: Request) -> Response {
        let context: [String: Any] = [
            "title": config.feed.title,
            "feeds": FeedRoutes.feeds.map { ["path": $0.path, "summary": $0.format.summary] },
            "sources": config.sources.map { ["id": $0.id, "plugin": $0.plugin, "enabled": $0.enabled] as [String: Any] },
        ]
        let html = template?.render(context) ?? config.feed.title
        return HTTPAnswer(body: Array(html.utf8), contentType: "text/html; charset=utf-8", lastModified: nil, maxAge: nil)
            .response(to: request)
    }
}
