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

    public static let defaults = ConnectionLimits(maxConnections: 2048, activeRequests: defaultActiveRequests,
                                                  headerTimeout: .seconds(10), idleTimeout: .seconds(30))

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

    public init(maxConnections: Int, activeRequests: Int, headerTimeout: Duration, idleTimeout: Duration) {
        self.maxConnections = maxConnections
        self.activeRequests = activeRequests
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
    }
}

/// The connections open now, shared by every connection's ``ConnectionGuard``: those
/// admitted, and those being refused with an answer.
final class OpenConnections: Sendable {
    private let count = Atomic<Int>(0)
    private let refusing = Atomic<Int>(0)

    /// Counts one more connection; false (and not counted) when `limit` are open.
    func admit(limit: Int) -> Bool {
        Self.increment(count, below: limit)
    }

    func release() {
        count.subtract(1, ordering: .relaxed)
    }

    /// Counts one more refusal being answered; false when `limit` are.
    func admitRefusal(limit: Int) -> Bool {
        Self.increment(refusing, below: limit)
    }

    func releaseRefusal() {
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
}

/// One connection's guard, between the HTTP codec and the router: it refuses a
/// connection beyond the cap with a 503 problem, and closes one whose client does not
/// finish a request head in time (a half-sent header, or an idle keep-alive). Time is
/// counted from the opening or the last response, not from the last byte, so a client
/// trickling one byte at a time is closed like a silent one.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limits: ConnectionLimits
    private let open: OpenConnections
    private var admitted = false
    private var refused = false
    /// Counted among the refusals being answered.
    private var answeringRefusal = false
    /// When the connection is closed unless a request head arrives first; nil while a
    /// request is being answered.
    private var deadline: NIODeadline?
    /// The one timer that enforces ``deadline``, and when it fires.
    private var timer: (task: Scheduled<Void>, at: NIODeadline)?

    init(limits: ConnectionLimits, open: OpenConnections) {
        self.limits = limits
        self.open = open
    }

    func channelActive(context: ChannelHandlerContext) {
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

    func channelInactive(context: ChannelHandlerContext) {
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

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A refused connection's request is read and dropped, never answered.
        guard !refused else { return }
        if case .head = unwrapInboundIn(data) {
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), admitted {
            awaitHead(within: limits.idleTimeout, context: context)
        }
        context.write(data, promise: promise)
    }

    /// Closes the connection unless a request head arrives within `time`. The timer is
    /// lazy: a request moves the deadline, not the timer, which when it fires closes the
    /// connection or waits on until the deadline now in force. Scheduling and cancelling a
    /// task for every request was a tenth of a kept answer's time.
    private func awaitHead(within time: Duration, context: ChannelHandlerContext) {
        let due = NIODeadline.now() + .nanoseconds(Int64(time / .nanoseconds(1)))
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
            context.channel.close(promise: nil)
        } else {
            schedule(at: deadline, context: context)
        }
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
