import FeedEngine
import Foundation
import HTTPTypes
import HummingbirdCore
import NIOCore
import NIOHTTPTypes

/// What every connection's ``KeptAnswerHandler`` shares: the kept responses and where to
/// count and log what it answers.
package struct KeptAnswers: Sendable {
    package let responses: any RenderedResponseCache
    package let versions: SourceVersions
    package let metrics: ServeMetrics
    /// Nil: no access-log lines (`--no-access-log`), the metrics only.
    package let accessLog: (@Sendable (String) -> Void)?
    /// The routes whose answers are kept responses: the feeds and the reader.
    package let paths: Set<String>
    package let serverName: String
    /// Whether a request needs no one now (no account exists yet): only then are kept
    /// answers given.
    package let answersAnyone: @Sendable () -> Bool

    package init(responses: any RenderedResponseCache, versions: SourceVersions, metrics: ServeMetrics, accessLog: (@Sendable (String) -> Void)?, paths: Set<String>, serverName: String, answersAnyone: @escaping @Sendable () -> Bool) {
        self.responses = responses
        self.versions = versions
        self.metrics = metrics
        self.accessLog = accessLog
        self.paths = paths
        self.serverName = serverName
        self.answersAnyone = answersAnyone
    }
}

/// Answers a request whose rendered response is kept — the warm feed every reader polls —
/// on the connection's event loop, before Hummingbird sees it: no task, no router, no
/// middleware, the same bytes and headers (`Date`, `Server`, `Content-Length`), the same
/// 304 and gzip choice, the same metrics and access-log line. Anything else (another
/// route, a response not kept, `Connection:` set, a request while an earlier one on the
/// connection is still being answered) goes on to Hummingbird unchanged, so answers
/// leave in the order requests came. With the lazy connection timer it took the warm gzip
/// feed under `wrk -t2 -c32` from 28–31k to 46–58k requests a second (docs/performance.md).
package final class KeptAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    private let kept: KeptAnswers
    /// Requests passed on to Hummingbird whose response has not ended yet.
    private var passedOn = 0
    /// The rest of a request answered here (its body, its end) is dropped.
    private var dropping = false
    /// The `Date` header of the current second.
    private var date: (second: Int, text: String) = (-1, "")

    package init(kept: KeptAnswers) {
        self.kept = kept
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let head):
            if passedOn == 0, answer(head, context: context) {
                dropping = true
                return
            }
            passedOn += 1
        case .body, .end:
            if dropping {
                if case .end = part { dropping = false }
                return
            }
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), passedOn > 0 { passedOn -= 1 }
        context.write(data, promise: promise)
    }

    /// Writes the kept answer to `head`, if there is one.
    private func answer(_ head: HTTPRequest, context: ChannelHandlerContext) -> Bool {
        guard kept.answersAnyone(), head.method == .get || head.method == .head, head.headerFields[.connection] == nil,
              let target = head.path else { return false }
        // Timed from here: a request this handler passes on is timed by the access log's middleware.
        let start = ContinuousClock.now
        let path = target.utf8.firstIndex(of: UInt8(ascii: "?")).map { String(target[..<$0]) } ?? target
        guard kept.paths.contains(path),
              let response = kept.responses.kept(ResponseKey.of(authority: head.authority, target: target), versions: kept.versions)
        else { return false }
        let answer = response.answer(to: head.headerFields)
        var headers = answer.headers
        // As Hummingbird writes a response: its length, then the date and the server.
        headers[.contentLength] = String(answer.body.readableBytes)
        headers[.date] = currentDate()
        headers[.server] = kept.serverName
        context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: headers))), promise: nil)
        if head.method != .head, answer.body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(answer.body)), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        let elapsed = start.duration(to: .now)
        kept.metrics.responseCache(hit: true)
        kept.metrics.request(route: path, status: answer.status.code, duration: elapsed)
        kept.accessLog?(AccessLine.text(method: head.method, target: target, status: answer.status.code, elapsed: elapsed))
        return true
    }

    private func currentDate() -> String {
        let now = Date()
        let second = Int(now.timeIntervalSince1970)
        if second != date.second { date = (second, HTTPDate.string(from: now)) }
        return date.text
    }
}
