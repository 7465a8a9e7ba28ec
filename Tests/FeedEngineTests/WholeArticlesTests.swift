import FeedConfig
import FeedCore
@testable import FeedEngine
import FeedState
import Foundation
import Synchronization
import Testing

/// `full_content:`'s allowance is a run's, not a page's: a listing accepted in chunks (a
/// remembered page is read 64 cards at a time) fetches at most ``WholeArticles/mostPerRun``
/// articles in all.
@Suite struct WholeArticlesTests {
    /// Every address answers the same article page; the addresses asked are counted.
    final class ArticleUpstream: HTTPTransport {
        let asked = Mutex(0)

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            asked.withLock { $0 += 1 }
            let page = "<html><body><article><p>\(String(repeating: "Whole story. ", count: 30))</p></article></body></html>"
            return HTTPResponse(status: 200, headers: ["content-type": "text/html"], body: Data(page.utf8), url: request.url)
        }
    }

    static func cards(_ range: Range<Int>) -> [Card] {
        range.map { Card(source: "blog", upstreamID: "\($0)", kind: .post, title: "Post \($0)", url: URL(string: "https://blog.example/\($0)")) }
    }

    @Test func theAllowanceIsTheRunsAcrossItsChunks() async throws {
        let upstream = ArticleUpstream()
        let articles = WholeArticles(rule: .auto, network: upstream, store: InMemoryCardStore())
        var report = WholeArticles.Report()
        let first = await articles.fill(Self.cards(0..<64), report: &report)
        let second = await articles.fill(Self.cards(64..<128), report: &report)
        #expect(upstream.asked.withLock { $0 } == WholeArticles.mostPerRun)
        #expect(report.fetched == 100 && report.failed == 0 && report.notTried == 28)
        #expect((first + second).filter { $0.details["content"] != nil }.count == 100)
        #expect(second.last?.details["content"] == nil)
    }
}
