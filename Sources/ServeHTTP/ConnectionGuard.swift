import FeedCore
import Foundation
import HTTPTypes
import HummingbirdCore
import NIOCore
import NIOHTTPTypes
import Synchronization

/// How many connections `serve` holds at once, how many requests it works on at once,
/// and how long it waits for a client.
public struct ConnectionLimits: Sendable, Equatable {
    /// Connections open at once; one more is answered 503 and closed. Below the usual
    /// limit of 1,024 descriptors per service, with room for upstream sockets and state.
    public var maxConnections: Int
    /// Requests worked on at once; the others wait their turn (``RequestSlots``).
    public var activeRequests: Int
    /// From a connection's opening to its first request head, complete.
    public var headerTimeout: Duration
    /// From the end of a response to the next request head, complete (keep-alive).
    public var idleTimeout: Duration
    /// From a request head to the end of its body, plus a second for each
    /// ``bodyBytesPerSecond`` received: a body that stops, or trickles, cannot hold its
    /// connection (and a sign-in form cannot be held open to fill the connections).
    public var bodyTimeout: Duration
    /// The least rate a body keeps its connection at, past ``bodyTimeout``.
    public static let bodyBytesPerSecond = 64 << 10

    public static let defaults = ConnectionLimits(maxConnections: 2048, activeRequests: defaultActiveRequests,
                                                  headerTimeout: .seconds(10), idleTimeout: .seconds(30), bodyTimeout: .seconds(10))

    /// Two per processor, at least 4: enough to keep every core busy while some wait on
    /// an upstream.
    public static var defaultActiveRequests: Int { max(4, 2 * ProcessInfo.processInfo.activeProcessorCount) }

    /// Descriptors kept free of connections: upstream sockets, the state database, the
    /// runtime's timers and threads, a refusal's socket in its last second.
    public static let reservedDescriptors = 192
    /// Refused connections answered 503 at once; beyond them a connection over the limit
    /// is closed without an answer (each answered one holds its socket up to a second).
    public static let answeredRefusals = 64

    /// The most connections that fit in `files` open files, with the reserve and the
    /// answered refusals (at least 16).
    public static func connections(fitting files: Int) -> Int {
        max(16, files - reservedDescriptors - answeredRefusals)
    }

    public init(maxConnections: Int, activeRequests: Int, headerTimeout: Duration, idleTimeout: Duration, bodyTimeout: Duration = .seconds(10)) {
        self.maxConnections = maxConnections
        self.activeRequests = activeRequests
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
    }
}

/// The connections open now, shared by every connection's ``ConnectionGuard``: those
/// admitted, and those being refused with an answer.
package final class OpenConnections: Sendable {
    private let count = Atomic<Int>(0)
    private let refusing = Atomic<Int>(0)

    /// Counts one more connection; false (and not counted) when `limit` are open.
    package func admit(limit: Int) -> Bool {
        Self.increment(count, below: limit)
    }

    package func release() {
        count.subtract(1, ordering: .relaxed)
    }

    /// Counts one more refusal being answered; false when `limit` are.
    package func admitRefusal(limit: Int) -> Bool {
        Self.increment(refusing, below: limit)
    }

    package func releaseRefusal() {
        refusing.subtract(1, ordering: .relaxed)
    }

    private static func increment(_ counter: borrowing Atomic<Int>, below limit: Int) -> Bool {
        var current = counter.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = counter.compareExchange(expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    package init() {}
}

/// One connection's guard, between the HTTP codec and the router: it refuses a
/// connection beyond the cap with a 503 problem, closes one whose client does not finish
/// a request head in time (a half-sent header, or an idle keep-alive), and answers 408
/// and closes one whose request body does not arrive in time. Time is counted from the
/// opening, the last response or the head, not from the last byte, so a client trickling
/// one byte at a time is closed like a silent one.
package final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    private let limits: ConnectionLimits
    private let open: OpenConnections
    private var admitted = false
    private var refused = false
    /// Counted among the refusals being answered.
    private var answeringRefusal = false
    /// When the connection is closed unless what it waits for arrives first; nil while a
    /// request is being answered.
    private var deadline: NIODeadline?
    /// What the deadline waits for.
    private var waitingFor = Awaited.head
    /// The current request's body: when its head came, and the bytes since.
    private var body: (start: NIODeadline, bytes: Int)?
    /// The current request's response: its head was written, its end was written.
    private var responseStarted = false
    private var responseEnded = false

    private enum Awaited {
        case head, body, nothing
    }
    /// The one timer that enforces ``deadline``, and when it fires.
    private var timer: (task: Scheduled<Void>, at: NIODeadline)?

    package init(limits: ConnectionLimits, open: OpenConnections) {
        self.limits = limits
        self.open = open
    }

    package func channelActive(context: ChannelHandlerContext) {
        guard open.admit(limit: limits.maxConnections) else {
            // Answered while few are; past that, closed at once: a flood of refusals
            // must not hold the descriptors the server needs.
            if open.admitRefusal(limit: ConnectionLimits.answeredRefusals) {
                answeringRefusal = true
                refuse(context: context)
            } else {
                refused = true
                context.close(promise: nil)
            }
            return
        }
        admitted = true
        awaitHead(within: limits.headerTimeout, context: context)
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        timer?.task.cancel()
        timer = nil
        if admitted {
            admitted = false
            open.release()
        }
        if answeringRefusal {
            answeringRefusal = false
            open.releaseRefusal()
        }
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A refused connection's request is read and dropped, never answered.
        guard !refused else { return }
        switch unwrapInboundIn(data) {
        case .head:
            let now = NIODeadline.now()
            body = (now, 0)
            responseStarted = false
            responseEnded = false
            waitingFor = .body
            setDeadline(now + Self.nanoseconds(limits.bodyTimeout), context: context)
        case .body(let buffer):
            if waitingFor == .body, var current = body {
                current.bytes += buffer.readableBytes
                body = current
                let allowance = Int64(current.bytes) * 1_000_000_000 / Int64(ConnectionLimits.bodyBytesPerSecond)
                setDeadline(current.start + Self.nanoseconds(limits.bodyTimeout) + .nanoseconds(allowance), context: context)
            }
        case .end:
            body = nil
            if waitingFor == .body {
                if responseEnded {
                    awaitHead(within: limits.idleTimeout, context: context)
                } else {
                    waitingFor = .nothing
                    deadline = nil
                }
            }
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head: responseStarted = true
        case .end where admitted:
            responseEnded = true
            // A response before its request's body ended: the body's deadline stays.
            if waitingFor != .body { awaitHead(within: limits.idleTimeout, context: context) }
        default: break
        }
        context.write(data, promise: promise)
    }

    private static func nanoseconds(_ duration: Duration) -> TimeAmount {
        .nanoseconds(Int64(duration / .nanoseconds(1)))
    }

    /// Closes the connection unless a request head arrives within `time`. The timer is
    /// lazy: a request moves the deadline, not the timer, which when it fires closes the
    /// connection or waits on until the deadline now in force. Scheduling and cancelling a
    /// task for every request was a tenth of a kept answer's time.
    private func awaitHead(within time: Duration, context: ChannelHandlerContext) {
        waitingFor = .head
        setDeadline(NIODeadline.now() + Self.nanoseconds(time), context: context)
    }

    private func setDeadline(_ due: NIODeadline, context: ChannelHandlerContext) {
        deadline = due
        // A timer set to fire later than the new deadline (an idle timeout shorter than the
        // header timeout) is set again; one that fires earlier looks again then.
        if let timer, timer.at <= due { return }
        schedule(at: due, context: context)
    }

    private func schedule(at due: NIODeadline, context: ChannelHandlerContext) {
        timer?.task.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = (context.eventLoop.scheduleTask(deadline: due) {
            let (handler, context) = loopBound.value
            handler.timerFired(context: context)
        }, due)
    }

    private func timerFired(context: ChannelHandlerContext) {
        timer = nil
        guard let deadline else { return }
        if deadline <= .now() {
            if waitingFor == .body, !responseStarted { answerTimeout(context: context) } else { context.channel.close(promise: nil) }
        } else {
            schedule(at: deadline, context: context)
        }
    }

    /// Answers 408 to a request whose body did not arrive in time, then closes.
    private func answerTimeout(context: ChannelHandlerContext) {
        self.deadline = nil
        let body = Problem(title: "Request Timeout", status: 408,
                           detail: "the request's body did not arrive within \(limits.bodyTimeout) (and 1 s more per 64 KiB sent)").encoded
        var head = HTTPResponse(status: .requestTimeout)
        head.headerFields[.contentType] = "application/problem+json"
        head.headerFields[.contentLength] = String(body.count)
        head.headerFields[.connection] = "close"
        responseStarted = true
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Answers 503 with a problem and `Retry-After`, then closes. The client's request, sent
    /// after the answer left, is read and dropped until the client closes (at most 1 s):
    /// closing on unread bytes would reset the connection and could lose the answer.
    private func refuse(context: ChannelHandlerContext) {
        refused = true
        let body = Problem(title: "Service Unavailable", status: 503,
                           detail: "the server holds \(limits.maxConnections) connections, its limit; try again shortly")
            .encoded
        var head = HTTPResponse(status: .serviceUnavailable)
        head.headerFields[.contentType] = "application/problem+json"
        head.headerFields[.contentLength] = String(body.count)
        head.headerFields[.connection] = "close"
        head.headerFields[.retryAfter] = "1"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        }
    }
}
