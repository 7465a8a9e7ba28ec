import ServeHTTP
import Crypto
import FeedState
import Foundation
import HTTPTypes
import Hummingbird

/// Who is reading, as far as the reader's forms need to know: a random session id in a
/// cookie (`HttpOnly`, `SameSite=Strict`), and the token every form carries, an HMAC of
/// that id under a key that never leaves the process. A POST is taken only with the token
/// of the session its cookie names, from this origin (``CrossSiteGuard``): another site can
/// make a browser send the cookie, never read the token.
package struct ReaderSessions: Sendable {
    package static let cookieName = "aggregate_session"
    private let key = SymmetricKey(size: .bits256)
    /// The cookie carries `Secure` (`--base-url https://…`).
    package var secure = false

    /// The request's session id, or a new one to set (`isNew`).
    package func session(of request: Request) -> ReaderSession {
        if let id = request.cookies[Self.cookieName]?.value, id.utf8.count == 64, id.utf8.allSatisfy(Self.isHexDigit) {
            return ReaderSession(id: id, isNew: false, secure: secure)
        }
        var generator = SystemRandomNumberGenerator()
        let id = (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
        return ReaderSession(id: id, isNew: true, secure: secure)
    }

    /// The forms' token of session `id`.
    package func token(for id: String) -> String {
        Hex.lowercase(HMAC<SHA256>.authenticationCode(for: Data(id.utf8), using: key))
    }

    /// Whether `token` is session `id`'s, compared in constant time.
    package func accepts(_ token: String?, for id: String) -> Bool {
        guard let token, token.utf8.count == 64 else { return false }
        let expected = Array(self.token(for: id).utf8)
        return zip(Array(token.utf8), expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// Sets the session cookie on `response` when the session is new.
    package static func set(_ session: ReaderSession, on response: inout Response) {
        guard session.isNew else { return }
        response.setCookie(Cookie(name: cookieName, value: session.id, path: "/", secure: session.secure, httpOnly: true, sameSite: .strict))
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    package init(secure: Bool = false) {
        self.secure = secure
    }
}

/// A reader's session: its id, whether it is new (its cookie is to be set), and whether
/// the cookie carries `Secure`.
package struct ReaderSession: Sendable {
    package var id: String
    package var isNew: Bool
    package var secure: Bool

    package init(id: String, isNew: Bool, secure: Bool) {
        self.id = id
        self.isNew = isNew
        self.secure = secure
    }
}

/// Refuses a state-changing request that another site made a browser send: by
/// `Sec-Fetch-Site` where the browser says it, else by `Origin` against the request's host.
package enum CrossSiteGuard {
    /// Why `request` is refused, or nil.
    package static func refusal(_ request: Request) -> String? {
        if let site = request.headers[.secFetchSite], !["same-origin", "none"].contains(site.lowercased()) {
            return "a request from another site (Sec-Fetch-Site: \(site)) changes nothing here"
        }
        if let origin = request.headers[.origin] {
            let host = URL(string: origin).flatMap { url in url.host.map { $0 + (url.port.map { ":\($0)" } ?? "") } }
            guard let host, let authority = request.head.authority, host.lowercased() == authority.lowercased() else {
                return "a request from another origin (\(origin)) changes nothing here"
            }
        }
        return nil
    }
}

extension HTTPField.Name {
    package static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
}
