import FeedCore
import FeedEngine

/// Where a source's latest answer came from: what pages, headers and `/healthz` say of it.
package enum SourceStatus: String, Encodable, Sendable {
    /// Its upstream, this time.
    case live
    /// The last good copy in the cache, or the recorded snapshot (the upstream failed).
    case cache, snapshot
    /// Nothing: the source failed and had no copy to fall back on.
    case failed

    package init(_ origin: Card.Origin) {
        switch origin {
        case .cache: self = .cache
        case .snapshot: self = .snapshot
        }
    }

    /// What pages and health show of `status`: where the answer came from, not the
    /// failure's wording (which changes from one try to the next).
    package init(_ status: SourceOutcome.Status) {
        switch status {
        case .live: self = .live
        case .fallback(let origin, _, _): self.init(origin)
        case .failed: self = .failed
        }
    }
}
