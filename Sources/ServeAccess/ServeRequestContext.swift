import ServeHTTP
import FeedState
import Hummingbird
import HummingbirdAuth
import NIOCore

/// The context of every request `serve` answers: Hummingbird's core, the connection's
/// peer and the client behind it (``ClientAddressMiddleware``), and who signed in
/// (hummingbird-auth's identity and session).
package struct ServeRequestContext: RequestContext, RemoteAddressRequestContext, AuthRequestContext, SessionRequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The connection's other end (a proxy, when there is one).
    package let remoteAddress: SocketAddress?
    /// The client: the peer, or whom a trusted proxy forwarded for.
    package var client: ClientAddress
    /// Who the request signed in as (a session, a token, Basic, a trusted proxy, or this
    /// machine's owner on a server without accounts).
    package var identity: SignedIn?
    /// Whether the client may see `/metrics` and the detailed `/healthz` (``OperationsAccess``).
    package var seesOperations = false
    package let sessions: SessionContext<LoginSession>

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        client = ClientAddress(address: remoteAddress?.ipAddress ?? "in-process", isLocal: false, viaTrustedProxy: false)
        identity = nil
        sessions = SessionContext()
    }

    /// The client's IP address as text (`127.0.0.1`, `::1`), without its port.
    package var clientAddress: String { client.address }

    /// Whether the client is this machine (``ClientAddress/isLocal``).
    package var isLocal: Bool { client.isLocal }

    /// Whose marks the request reads and writes: the account's, else the default person's
    /// (a `serve` without accounts).
    package var person: Int {
        identity?.person ?? StoreUser.default
    }

    /// Whether the request is an admin's: the role the admin route groups require
    /// (``SignedIn/roles``), asked by pages that offer an admin's buttons.
    package var isAdmin: Bool {
        identity?.roles.contains(.admin) == true
    }
}

/// What a signed-in browser's session keeps: the account, and the password version it
/// signed in under (a new password ends the session).
package struct LoginSession: Codable, Sendable {
    package var user: Int
    package var passwordVersion: Int

    package init(user: Int, passwordVersion: Int) {
        self.user = user
        self.passwordVersion = passwordVersion
    }
}
