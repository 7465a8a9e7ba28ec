import Crypto
import FeedCore
import FeedSupport
import Foundation

/// How a request is named in the response cache: the source, the URL with its secrets
/// redacted, and a keyed hash (HMAC-SHA-256) of everything that can make the answer
/// someone's own: the URL as sent, secrets and `user:password@` included, and every
/// header, the source's configured ones (API keys) among them.
///
/// Two sources, two configs sharing a state, or one key rotated within the TTL never
/// read each other's responses, and no secret is stored, nor a plain hash of one (a
/// short key could be guessed back from that). The hash key is a random secret made
/// once per cache and kept with it (``ResponseCache/identitySecret()``).
public struct RequestIdentity: Sendable {
    private let key: SymmetricKey

    public init(secret: Data) {
        key = SymmetricKey(data: secret)
    }

    /// An identity with a secret of its own (state kept in memory, or a cache whose
    /// secret could not be read: its entries are then this process's alone).
    public static func random() -> RequestIdentity {
        RequestIdentity(secret: newSecret())
    }

    /// 32 random bytes: a new cache's secret.
    public static func newSecret() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// The cache key of `request` from `source` (whose configured `headers` are added to
    /// every request below the cache): `users https://reqres.in/api/users?page=2 3f9c…`.
    public func cacheKey(source: String, request: HTTPRequest, headers: [String: String]) -> String {
        "\(source) \(request.url.redactedString) \(tag(url: request.url, headers: headers.merging(request.headers) { _, sent in sent }))"
    }

    /// The keyed hash of `text`, in hex (128 bits): names a secret without storing it, nor
    /// a plain hash of it.
    public func tag(_ text: String) -> String {
        tag(text, headers: [:])
    }

    /// The keyed hash of a URL as sent and its headers, in hex (128 bits).
    package func tag(url: URL, headers: [String: String]) -> String {
        tag(url.absoluteString, headers: headers)
    }

    private func tag(_ text: String, headers: [String: String]) -> String {
        var text = text
        for (name, value) in headers.map({ ($0.key.lowercased(), $0.value) }).sorted(by: { $0 < $1 }) {
            text += "\n\(name): \(value)"
        }
        let code = HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)
        return Hex.lowercase(code.prefix(16))
    }
}
