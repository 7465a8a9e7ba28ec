import ServeHTTP
import FeedState
import Foundation

/// Who may use `serve`, decided when it starts.
public enum AccessPolicy: Sendable {
    /// No accounts and no state to keep them, on a loopback address: this machine's, open.
    case open
    /// `--no-auth`: anyone who can reach the port reads the feeds; nothing changes state
    /// (no marks, no route but GET and HEAD).
    case readOnly
    /// Accounts: people sign in to read (a session, Basic, a token, a trusted proxy).
    case accounts(AccountAccess)

    /// Whether requests may change state (marks, sign-in).
    package var writes: Bool {
        if case .readOnly = self { return false }
        return true
    }
}

/// How people sign in when `serve` keeps accounts.
public struct AccountAccess: Sendable {
    public var store: any AccountStore
    /// Cookies carry `Secure` (`--base-url https://…`).
    public var secureCookies: Bool
    /// `--auth-proxy-header`: the header a trusted reverse proxy names the signed-in user
    /// in, believed from a `--trusted-proxy` peer only.
    public var proxyHeader: String?
    /// Started with no account on a loopback address: until the first account is added
    /// (`aggregate user add`), whoever reaches the port is this machine's owner; from then
    /// on, within a second, everyone signs in.
    public var openUntilFirstAccount: Bool

    public init(store: any AccountStore, secureCookies: Bool = false, proxyHeader: String? = nil, openUntilFirstAccount: Bool = false) {
        self.store = store
        self.secureCookies = secureCookies
        self.proxyHeader = proxyHeader
        self.openUntilFirstAccount = openUntilFirstAccount
    }
}
