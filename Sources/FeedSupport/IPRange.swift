import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An address or a CIDR block (`10.0.0.0/8`, `::1`, `fd00::/8`), read as the C library
/// reads addresses (`inet_pton`), so `127.1` or `0x7f000001` are not addresses here: they
/// are host names, which a resolver turns into addresses that are then checked.
public struct IPRange: Sendable, Equatable, CustomStringConvertible {
    let bytes: [UInt8]
    /// The number of leading bits that must match.
    public let prefix: Int
    public let description: String

    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let bytes = Self.bytes(of: String(parts[0])) else { return nil }
        let prefix: Int
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...bytes.count * 8).contains(given) else { return nil }
            prefix = given
        } else {
            prefix = bytes.count * 8
        }
        self.bytes = bytes
        self.prefix = prefix
        description = text
    }

    /// Whether the block is of IPv6 addresses (16 bytes).
    public var isIPv6: Bool { bytes.count == 16 }

    /// The loopback blocks: `127.0.0.0/8` and `::1`.
    public static let loopback: [IPRange] = [IPRange("127.0.0.0/8"), IPRange("::1")].compactMap { $0 }

    /// Whether `address` (as text, as NIO gives it) is in the block.
    public func contains(_ address: String) -> Bool {
        guard let other = Self.bytes(of: address) else { return false }
        return contains(bytes: other)
    }

    func contains(bytes other: [UInt8]) -> Bool {
        guard other.count == bytes.count else { return false }
        var left = prefix
        for (a, b) in zip(bytes, other) where left > 0 {
            let mask: UInt8 = left >= 8 ? 0xff : ~(0xff >> UInt8(left))
            if a & mask != b & mask { return false }
            left -= 8
        }
        return true
    }

    /// Whether `address` is one of this machine's own (loopback).
    public static func isLoopback(_ address: String) -> Bool {
        loopback.contains { $0.contains(address) }
    }

    /// Whether `serve` listening on `host` is reachable from this machine only.
    public static func isLoopbackHost(_ host: String) -> Bool {
        host.lowercased() == "localhost" || isLoopback(host)
    }

    /// 4 bytes for IPv4 (and an IPv4 address mapped into IPv6), 16 for IPv6.
    public static func bytes(of address: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff { return Array(bytes[12...]) }
        return bytes
    }
}

/// Which addresses are the public internet: what `serve` may fetch on a person's behalf.
/// Every block IANA reserves for something else is not: this host and loopback, private
/// and shared (carrier-grade NAT) networks, link-local, unique-local, multicast, the
/// documentation and benchmarking blocks, broadcast, and IPv6 forms that embed an IPv4
/// address (NAT64, 6to4, Teredo), which could name any of those.
public enum PublicAddress {
    static let notPublic: [IPRange] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
        "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
        "224.0.0.0/4", "240.0.0.0/4",
        "::/128", "::1/128", "::/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/32", "2001:db8::/32", "2002::/16",
        "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
    ].compactMap(IPRange.init)

    /// Whether `address` (a numeric address as text) is public. Anything that does not
    /// read as an address is not.
    public static func isPublic(_ address: String) -> Bool {
        guard let bytes = IPRange.bytes(of: address) else { return false }
        return !notPublic.contains { $0.contains(bytes: bytes) }
    }
}
