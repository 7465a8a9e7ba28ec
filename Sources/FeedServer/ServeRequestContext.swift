import Hummingbird
import NIOCore

/// The context of every request `serve` answers: Hummingbird's core, and the address the
/// connection came from (per-client limits; later, trusted proxies).
struct ServeRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The client's IP address as text (`127.0.0.1`, `::1`), without its port.
    var clientAddress: String {
        remoteAddress?.ipAddress ?? "unknown"
    }
}
