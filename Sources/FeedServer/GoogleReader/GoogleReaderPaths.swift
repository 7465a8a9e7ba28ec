import GoogleReaderModel
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Google Reader clients append `/reader/api/0/…` to the address people type, and people
/// type it with a trailing slash (`…/api/greader/`): a path under `/api/greader` has any
/// run of slashes read as one before the router sees it, except after a `:` (a stream id
/// such as `feed/https://example.org/feed.xml` keeps its scheme's `//`). A channel handler
/// after the HTTP decoder, since Hummingbird resolves a route before any middleware runs.
final class GoogleReaderPaths: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(var head) = unwrapInboundIn(data), let path = head.path, let normal = Self.normalized(path) {
            head.path = normal
            context.fireChannelRead(wrapInboundOut(.head(head)))
            return
        }
        context.fireChannelRead(data)
    }

    /// `path` with its slashes collapsed, or nil when it needs nothing (the common case:
    /// not the API's, or no run of slashes).
    static func normalized(_ path: String) -> String? {
        guard path.utf8.starts(with: GoogleReader.prefix.utf8) else { return nil }
        let end = path.firstIndex(of: "?") ?? path.endIndex
        guard path[..<end].contains("//") else { return nil }
        var out = ""
        var previous: Character?
        var beforePrevious: Character?
        for character in path[..<end] {
            if character == "/", previous == "/", beforePrevious != ":" { continue }
            out.append(character)
            (beforePrevious, previous) = (previous, character)
        }
        return out + path[end...]
    }
}
