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
    /// The host, or a redirect's, resolves to an address the transport may not reach on
    /// someone's behalf (loopback, private, link-local…: `serve`'s subscriptions).
    case notPublic
    /// The body is larger than the source's cap.
    case tooLarge(bytes: Int)
    /// A test or tool with no network.
    case noNetwork
    /// Anything else the HTTP client reported, in its words (never retried).
    case other(String)
    /// The host failed this way moments ago, so it was not asked again (never retried).
    indirect case lately(TransportFailure)

    /// Worth another try: the next attempt may well succeed.
    public var isTransient: Bool {
        switch self {
        case .refused, .dns, .unreachable, .closedEarly: true
        case .tls, .redirectLoop, .tooManyRedirects, .badRedirect, .notPublic, .tooLarge, .noNetwork, .other, .lately: false
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
        case .notPublic: "the address is not a public one"
        case .tooLarge(let bytes): "response larger than \(ByteSize.text(bytes)) (raise max_body in Sources.yml to accept it)"
        case .noNetwork: "no network"
        case .other(let text): "network error: \(text)"
        case .lately(let failure): "\(failure) (moments ago; not asked again yet)"
        }
    }
}

/// Sizes in bytes as people write them: `20MiB`, `512KiB`, `1GB`, `1048576`.
public enum ByteSize {
    static let units: [(suffix: String, factor: Int)] = [
        ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1000), ("B", 1),
    ]

    /// The number of bytes `text` means, or nil; at most `Int.max` (no overflow).
    public static func parse(_ text: String) -> Int? {
        let text = text.trimmingCharacters(in: .whitespaces)
        let (suffix, factor) = units.first { text.hasSuffix($0.suffix) } ?? ("", 1)
        guard let number = Int(text.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)), number >= 0 else { return nil }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: factor)
        return overflow ? nil : bytes
    }

    /// `20 MiB`, `1.5 KiB`, `300 bytes`.
    public static func text(_ bytes: Int) -> String {
        for (suffix, factor) in units.prefix(3) where bytes >= factor {
            let value = Double(bytes) / Double(factor)
            return value.rounded() == value ? "\(Int(value)) \(suffix)" : "\(String(format: "%.1f", value)) \(suffix)"
        }
        return "\(bytes) bytes"
    }
}
