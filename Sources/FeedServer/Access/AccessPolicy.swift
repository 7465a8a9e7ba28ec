import FeedState
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Who may use `serve`, decided when it starts.
public enum AccessPolicy: Sendable {
    /// No accounts, on a loopback address: this machine's, open, as before accounts.
    case open
    /// `--no-auth`: anyone who can reach the port reads the feeds; nothing changes state
    /// (no marks, no route but GET and HEAD).
    case readOnly
    /// Accounts: people sign in to read (a session, Basic, a token, a trusted proxy).
    case accounts(AccountAccess)

    /// Whether requests may change state (marks, sign-in).
    var writes: Bool {
        if case .readOnly = self { return false }
        return true
    }
}

/// How people sign in when `serve` has accounts.
public struct AccountAccess: Sendable {
    public var store: any AccountStore
    /// Session cookies carry `Secure` (`--base-url https://…`).
    public var secureCookies: Bool
    /// `--auth-proxy-header`: the header a trusted reverse proxy names the signed-in user in.
    public var proxyHeader: String?
    /// `--trusted-proxy`: the addresses whose proxy header is believed.
    public var trustedProxies: [IPRange]

    public init(store: any AccountStore, secureCookies: Bool = false, proxyHeader: String? = nil, trustedProxies: [IPRange] = []) {
        self.store = store
        self.secureCookies = secureCookies
        self.proxyHeader = proxyHeader
        self.trustedProxies = trustedProxies
    }
}

/// An address or a CIDR block (`10.0.0.0/8`, `::1`, `fd00::/8`).
public struct IPRange: Sendable, Equatable, CustomStringConvertible {
    let bytes: [UInt8]
    let prefix: Int
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

    /// The loopback blocks: `127.0.0.0/8` and `::1`.
    public static let loopback: [IPRange] = [IPRange("127.0.0.0/8"), IPRange("::1")].compactMap { $0 }

    /// Whether `address` (as text, as NIO gives it) is in the block.
    public func contains(_ address: String) -> Bool {
        guard let other = Self.bytes(of: address), other.count == bytes.count else { return false }
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
    static func bytes(of address: String) -> [UInt8]? {
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
