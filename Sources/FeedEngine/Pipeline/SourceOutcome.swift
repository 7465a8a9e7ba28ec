import FeedCore
import Foundation

/// How one source fared in a run, for stderr and the exit code.
public struct SourceOutcome: Sendable {
    public var id: String
    public var url: URL
    /// Upstream pages read (from any tier).
    public var pages = 0
    /// Cards the source produced, before filters.
    public var produced = 0
    /// The upstream's own item count, when it says.
    public var upstreamTotal: Int?
    /// The fallback tier that served the source, if the live upstream did not.
    public var origin: Card.Origin?
    /// What the fallback tier served, in words (`cached response from 5 minutes ago`).
    public var servedBy: String?
    /// Why the live upstream failed (with its URL), when it did.
    public var liveFailure: String?
    /// Why fallback tiers failed, in order.
    public var fallbackFailures: [String] = []
    /// Set when the source failed for good (it may still have produced earlier pages).
    public var failure: String?
    public var notFound: String?
    /// Why the source has no detail for the asked id (empty: no detail endpoint at all).
    public var detailUnavailable: String?
    /// Why fetching the detail failed, when the list card was shown instead.
    public var detailFailure: String?
    public var skipped: [SkippedRecord] = []
    public var notes: [String] = []
    /// Set when max_pages or max_items ended the walk.
    public var budgetNote: String?

    public init(id: String, url: URL) {
        self.id = id
        self.url = url
    }

    /// Lines for stderr: failures and fallbacks always, notes only when `verbose`.
    public func messages(verbose: Bool) -> [String] {
        var lines: [String] = []
        if let failure {
            let tried = fallbackFailures.isEmpty || !verbose ? "" : "; fallback failed: \(fallbackFailures.joined(separator: "; "))"
            lines.append("\(id): \(failure)\(tried)")
        } else if origin != nil, let liveFailure {
            lines.append("\(id): \(liveFailure); using \(servedBy ?? "a fallback")")
        }
        if let reason = detailUnavailable, !reason.isEmpty {
            lines.append("\(id): \(reason); showing the card from the list")
        }
        if let detailFailure, notFound == nil {
            lines.append("\(id): detail unavailable: \(detailFailure); showing the card from the list")
        }
        lines += skipped.map { "\(id): \($0)" }
        if verbose {
            lines += notes.map { "\(id): \($0)" }
            if let budgetNote { lines.append("\(id): \(budgetNote)") }
            let served = origin != nil ? " (\(servedBy ?? "fallback"))" : ""
            let total = upstreamTotal.map { $0 > produced ? " (the upstream has \($0))" : "" } ?? ""
            lines.append("\(id): \(produced) cards from \(pages) page\(pages == 1 ? "" : "s")\(served)\(total)")
        }
        return lines
    }

    /// Did the source lose anything (failed, or skipped records)?
    public var isDegraded: Bool { failure != nil || detailFailure != nil || !skipped.isEmpty }
}

/// The overall result of a run, which the command line maps to an exit code.
public enum RunStatus: Sendable, Equatable {
    /// Every selected source produced its cards (possibly from a fallback tier).
    case ok
    /// Some sources failed or lost records; the rest printed.
    case partial
    /// Every selected source failed and nothing was printed.
    case failed

    /// `strict` counts fallbacks as partial.
    public init(outcomes: [SourceOutcome], strict: Bool) {
        let failed = outcomes.filter { $0.failure != nil && $0.produced == 0 }
        if !outcomes.isEmpty && failed.count == outcomes.count {
            self = .failed
        } else if outcomes.contains(where: \.isDegraded) || (strict && outcomes.contains { $0.origin != nil }) {
            self = .partial
        } else {
            self = .ok
        }
    }
}
