import FeedEngine
import Foundation
import Hummingbird
import NIOCore

/// `/`: a small page listing the feeds and sources, with links, for a person who opens
/// the server in a browser.
enum IndexPage {
    static func response(config: FeedConfig, request: Request) -> Response {
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        let title = escape(config.feed.title)
        var lines = [
            "<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\"><title>\(title)</title>",
            "<link rel=\"alternate\" type=\"application/atom+xml\" title=\"\(title)\" href=\"/feed.atom\">",
            "<link rel=\"alternate\" type=\"application/rss+xml\" title=\"\(title)\" href=\"/feed.rss\">",
            "<link rel=\"alternate\" type=\"application/feed+json\" title=\"\(title)\" href=\"/feed.json\">",
            "</head><body style=\"font-family: sans-serif; max-width: 40em; margin: 1em auto\">",
            "<h1>\(title)</h1>", "<h2>Feeds</h2>", "<ul>",
        ]
        for (path, format) in FeedRoutes.feeds {
            lines.append("<li><a href=\"\(path)\">\(path)</a> — \(escape(format.summary))</li>")
        }
        lines += ["</ul>", "<p>Every feed takes <code>source</code> (repeatable), <code>kind</code>, <code>q</code>, <code>sort</code>, <code>order</code>, <code>page</code> and <code>per_page</code>, as the command line does.</p>",
                  "<h2>Sources</h2>", "<ul>"]
        for source in config.sources {
            let state = source.enabled ? "" : " (disabled)"
            lines.append("<li><a href=\"/feed.atom?source=\(escape(source.id))\">\(escape(source.id))</a> — \(escape(source.plugin))\(state)</li>")
        }
        lines += ["</ul>", "<p><a href=\"/sources\">/sources</a> · <a href=\"/healthz\">/healthz</a></p>", "</body></html>"]
        return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: lines.joined(separator: "\n") + "\n")))
    }
}
