import FeedCore
import FeedSupport
import Foundation
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// Which addresses a ``LiveHTTPTransport`` may connect to. The command line and a
/// source's own refresh reach anything (the machine's owner wrote Sources.yml); a URL a
/// person sends through `serve` is fetched from public addresses only, unless the owner
/// allows private ones (`serve --allow-private-feeds`, or blocks with
/// `--allow-private-feed CIDR`).
public struct AddressPolicy: Sendable {
    /// No check at all.
    public let allowsAll: Bool
    /// Blocks allowed besides the public internet.
    public let alsoAllowed: [IPRange]

    public static let any = AddressPolicy(allowsAll: true, alsoAllowed: [])
    /// Public addresses, and those in `alsoAllowed`.
    public static func publicOnly(alsoAllowing alsoAllowed: [IPRange] = []) -> AddressPolicy {
        AddressPolicy(allowsAll: false, alsoAllowed: alsoAllowed)
    }

    /// Whether the numeric `address` may be reached.
    public func permits(_ address: String) -> Bool {
        allowsAll || PublicAddress.isPublic(address) || alsoAllowed.contains { $0.contains(address) }
    }

    /// The address to connect to for `host`: every address it resolves to must be
    /// permitted (a name with one private address among public ones is refused: the
    /// client could be made to pick it). Any spelling of an address (`2130706433`,
    /// `0x7f.1`) is resolved as the C library's resolver reads it, so it is checked as the
    /// address it means. Throws ``TransportFailure/notPublic`` or ``TransportFailure/dns``.
    func checkedAddress(of host: String) async throws -> String {
        // `[::1]` in a URL is `::1` to the resolver.
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let addresses = try await NIOThreadPool.singleton.runIfActive { Self.resolve(name) }
        guard let first = addresses.first else { throw SourceError.transport(.dns) }
        guard addresses.allSatisfy(permits) else { throw SourceError.transport(.notPublic) }
        return first
    }

    /// The numeric addresses `name` resolves to (IPv4 and IPv6, TCP), as text.
    static func resolve(_ name: String) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var found: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(current.pointee.ai_addr, current.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 {
                let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !found.contains(address) { found.append(address) }
            }
            entry = current.pointee.ai_next
        }
        return found
    }
}
