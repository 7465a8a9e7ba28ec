import ServeHTTP
import FeedSupport
import HTTPTypes
import Hummingbird

/// Who is at the other end of a request: the address sign-in limits count and card
/// lookups are bucketed by, and whether it is this machine (which sees `/metrics` and
/// the detailed `/healthz` without signing in).
///
/// From a `--trusted-proxy` peer, the client is the nearest address of the forwarding
/// chain (`Forwarded: for=`, else `X-Forwarded-For`) that is not itself a trusted proxy:
/// the one the proxy saw. From any other peer, forwarding headers are not believed, and a
/// request that carries them is never this machine, even from loopback: a proxy on this
/// machine that nobody declared would otherwise make every client "local".
package struct ClientAddress: Sendable, Equatable {
    /// The address as text (`203.0.113.7`, `::1`), or `in-process` for a request made
    /// without a connection (tests).
    package var address: String
    /// This machine: loopback, with no forwarding in between that was not vouched for.
    package var isLocal: Bool
    /// The peer is a trusted proxy (its `--auth-proxy-header` is believed).
    package var viaTrustedProxy: Bool

    package static let inProcess = ClientAddress(address: "in-process", isLocal: true, viaTrustedProxy: false)

    /// The client of a request from `peer` (nil: no connection) carrying `headers`.
    package init(peer: String?, headers: HTTPFields, trustedProxies: [IPRange]) {
        let chain = Self.forwardedChain(headers)
        guard let peer else {
            self.init(address: "in-process", isLocal: chain == nil, viaTrustedProxy: false)
            return
        }
        let trusted = trustedProxies.contains { $0.contains(peer) }
        guard let chain, trusted else {
            self.init(address: peer, isLocal: chain == nil && IPRange.isLoopback(peer), viaTrustedProxy: trusted)
            return
        }
        // Right to left: each trusted proxy appended the address it saw.
        var client = peer
        for hop in chain.reversed() {
            guard let address = hop else { break }
            client = address
            if !trustedProxies.contains(where: { $0.contains(address) }) { break }
        }
        self.init(address: client, isLocal: IPRange.isLoopback(client), viaTrustedProxy: true)
    }

    package init(address: String, isLocal: Bool, viaTrustedProxy: Bool) {
        self.address = address
        self.isLocal = isLocal
        self.viaTrustedProxy = viaTrustedProxy
    }

    /// The forwarding chain a request claims, oldest first; nil when it carries no
    /// forwarding header. An element that is not an address (`unknown`, an obfuscated
    /// `_name`) is nil: the walk stops there.
    package static func forwardedChain(_ headers: HTTPFields) -> [String?]? {
        let forwarded = headers[values: .forwarded]
        if !forwarded.isEmpty {
            return forwarded.flatMap { $0.split(separator: ",") }.map { element in
                let pairs = element.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                guard let value = pairs.first(where: { $0.lowercased().hasPrefix("for=") })?.dropFirst(4) else { return nil }
                return address(String(value))
            }
        }
        let xff = headers[values: .xForwardedFor] + headers[values: .xRealIP]
        guard !xff.isEmpty else { return nil }
        return xff.flatMap { $0.split(separator: ",") }.map { address(String($0)) }
    }

    /// `192.0.2.7`, `"[2001:db8::1]:4711"`, `192.0.2.7:80` as a bare address, or nil.
    package static func address(_ text: String) -> String? {
        var value = text.trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
        if value.hasPrefix("["), let close = value.firstIndex(of: "]") {
            value = String(value[value.index(after: value.startIndex)..<close])
        } else if value.filter({ $0 == ":" }).count == 1, let colon = value.firstIndex(of: ":") {
            value = String(value[..<colon])
        }
        return IPRange.bytes(of: value) == nil ? nil : value
    }

    /// Why `block` is too wide to trust as a proxy, or nil: wider than /8 of IPv4 or /32 of
    /// IPv6 would let most of the internet claim any address.
    package static func problem(trusting block: IPRange) -> String? {
        let narrowest = block.isIPv6 ? 32 : 8
        guard block.prefix < narrowest else { return nil }
        return "--trusted-proxy \(block) is wider than /\(narrowest): every client in it could claim to be any address, " +
            "this machine included; name the proxy's own address or network (such as 127.0.0.1/32 or 10.0.0.0/24)"
    }
}

/// Sets each request's ``ServeRequestContext/client`` before anything reads it.
package struct ClientAddressMiddleware: RouterMiddleware {
    package typealias Context = ServeRequestContext
    package let trustedProxies: [IPRange]

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.client = ClientAddress(peer: context.remoteAddress?.ipAddress, headers: request.headers, trustedProxies: trustedProxies)
        return try await next(request, context)
    }

    package init(trustedProxies: [IPRange]) {
        self.trustedProxies = trustedProxies
    }
}

extension HTTPField.Name {
    package static let forwarded = HTTPField.Name("Forwarded")!
    package static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    package static let xRealIP = HTTPField.Name("X-Real-IP")!
}
