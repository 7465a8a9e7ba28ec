import ServeHTTP
import Crypto
import FeedState
import Foundation
import Hummingbird
import ServiceLifecycle

/// hummingbird-auth's session storage on the accounts' state: a browser stays signed in
/// across a restart of `serve`, and every replica on a shared PostgreSQL state knows its
/// session. A session's id is a bearer secret (the cookie's value), so only its SHA-256
/// is kept as the key; the value is the session as JSON (the account and its password
/// version: nothing secret).
package struct AccountSessions: PersistDriver {
    package let store: any AccountStore

    package static func key(_ id: String) -> String {
        Hex.lowercase(SHA256.hash(data: Data(id.utf8)))
    }

    private static func expiry(_ expires: Duration?) -> Date? {
        expires.map { Date().addingTimeInterval(Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) }
    }

    private static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    package func create<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        guard try await store.keepSession(Self.key(key), value: Self.json(value), expires: Self.expiry(expires), replacing: false, now: Date()) else {
            throw PersistError.duplicate
        }
    }

    package func set<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        _ = try await store.keepSession(Self.key(key), value: Self.json(value), expires: Self.expiry(expires), replacing: true, now: Date())
    }

    package func get<Object: Codable & Sendable>(key: String, as: Object.Type) async throws -> Object? {
        guard let kept = try await store.session(Self.key(key), now: Date()) else { return nil }
        return try? JSONDecoder().decode(Object.self, from: Data(kept.value.utf8))
    }

    package func remove(key: String) async throws {
        try await store.endSession(Self.key(key))
    }

    /// Nothing runs: expired sessions are dropped when sessions are written.
    package func run() async throws {
        try? await gracefulShutdown()
    }

    package init(store: any AccountStore) {
        self.store = store
    }
}
