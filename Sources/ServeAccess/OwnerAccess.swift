import ServeHTTP
import FeedState
import ServiceLifecycle
import Synchronization

/// Whether a request that signs in as nobody is this machine's owner: always on a server
/// without accounts (``AccessPolicy/open``), a guest on `--no-auth`, never with accounts —
/// and on a server started before its first account, until that account exists. The
/// watch is a service that looks at the accounts once a second and closes the server
/// for good when one appears; kept answers, which skip the router, ask it too.
package final class OwnerAccess: Service, Sendable {
    package enum Mode: Sendable {
        case owner, guest, none
        case untilFirstAccount(any AccountStore)
    }

    package let mode: Mode
    private let open: Atomic<Bool>

    package init(_ mode: Mode) {
        self.mode = mode
        switch mode {
        case .owner, .guest, .untilFirstAccount: open = Atomic(true)
        case .none: open = Atomic(false)
        }
    }

    /// Whether a request without credentials is answered as the owner (or guest) now.
    package var isOpen: Bool { open.load(ordering: .relaxed) }

    /// Who a request without credentials is, or nil: it must sign in.
    package var anonymous: SignedIn? {
        guard isOpen else { return nil }
        if case .guest = mode { return .guest }
        return .owner
    }

    /// Closes the server when the first account appears.
    package func run() async throws {
        guard case .untilFirstAccount(let store) = mode else {
            try? await gracefulShutdown()
            return
        }
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            if let accounts = try? await store.accounts(), !accounts.isEmpty {
                open.store(false, ordering: .relaxed)
                break
            }
            _ = try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
        }
        // A service that returns ends the server: this one waits for the end instead.
        try? await gracefulShutdown()
    }
}
