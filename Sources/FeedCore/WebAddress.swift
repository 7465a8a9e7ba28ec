import Foundation

extension URL {
    /// Whether this is an absolute `http` or `https` address with a host: the only kind a
    /// card's link, a source's `url` or a delivery target may be, and the only kind that
    /// becomes an `href` or `src`.
    public var isWebAddress: Bool {
        guard let scheme, scheme.utf8.count <= 5, let host, !host.isEmpty else { return false }
        let lowered = scheme.lowercased()
        return lowered == "https" || lowered == "http"
    }
}
