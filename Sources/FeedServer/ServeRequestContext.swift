import FeedState
import Hummingbird
import HummingbirdAuth
import NIOCore

/// The context of every request `serve` answers: Hummingbird's core, the address the
/// connection came from (per-client limits, trusted proxies), and who signed in
/// (hummingbird-auth's identity and session).
struct ServeRequestContext: RequestContext, RemoteAddressRequestContext, AuthRequestContext, SessionRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    /// Who the request signed in as (a session, a token, Basic, a trusted proxy).
    var identity: SignedIn?
    let sessions: SessionContext<LoginSession>

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        identity = nil
        sessions = SessionContext()
    }

    /// The client's IP address as text (`127.0.0.1`, `::1`), without its port.
    var clientAddress: String {
        remoteAddress?.ipAddress ?? "unknown"
    }

    /// Whether the client is this machine: a loopback address, a Unix socket, or no network
    /// connection at all (a request made in process).
    var isLocal: Bool {
        guard let remoteAddress else { return true }
        guard let ip = remoteAddress.ipAddress else { return true }
        return IPRange.isLoopback(ip)
    }

    /// Whose marks the request reads and writes: the account's, else the default person's
    /// (a `serve` without accounts).
    var person: Int {
        identity?.account.id ?? StoreUser.default
    }
}

/// What a signed-in browser's session keeps: the account, and the password version it
/// signed in under (a new password ends the session).
struct LoginSession: Codable, Sendable {
    var user: Int
    var passwordVersion: Int
}
