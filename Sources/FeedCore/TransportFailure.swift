/// Why no usable HTTP response arrived, as a type: retry decisions and messages are made
/// from the case, never from an error's wording.
public enum TransportFailure: Sendable, Hashable, CustomStringConvertible {
    /// Nothing listens at the address.
    case refused
    /// The host name does not resolve.
    case dns
    /// No route, network down, or a connection reset while connecting.
    case unreachable
    /// The server closed the connection before the response was complete.
    case closedEarly
    /// The TLS handshake or certificate check failed.
    case tls
    /// A redirect came back to a URL already visited.
    case redirectLoop
    /// More redirects than allowed.
    case tooManyRedirects(Int)
    /// A redirect to something that is not http(s).
    case badRedirect
    /// The body is larger than the source's cap.
    case tooLarge(bytes: Int)
    /// A test or tool with no network.
    case noNetwork
    /// Anything else the HTTP client reported, in its words (never retried).
    case other(String)

    /// Worth another try: the next attempt may well succeed.
    public var isTransient: Bool {
        switch self {
        case .refused, .dns, .unreachable, .closedEarly: true
        case .tls, .redirectLoop, .tooManyRedirects, .badRedirect, .tooLarge, .noNetwork, .other: false
        }
    }

    public var description: String {
        switch self {
        case .refused: "connection refused"
        case .dns: "network unreachable (the host name does not resolve)"
        case .unreachable: "network unreachable"
        case .closedEarly: "the server closed the connection before the response was complete"
        case .tls: "TLS handshake failed"
        case .redirectLoop: "redirect loop"
        case .tooManyRedirects(let limit): "more than \(limit) redirects"
        case .badRedirect: "redirected to an address that is not http(s)"
        case .tooLarge(let bytes): "response larger than \(bytes / (1024 * 1024)) MiB"
        case .noNetwork: "no network"
        case .other(let text): "network error: \(text)"
        }
    }
}
