import FeedConfig
import FeedCore
import FeedSupport
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
    /// Where the source's cards came from, or why none came.
    public enum Status: Sendable, Equatable {
        /// Served by the live upstream (or not asked yet).
        case live
        /// Served by a fallback tier; `liveFailure` is why the upstream did not (nil offline).
        case fallback(Card.Origin, liveFailure: String?, servedBy: String)
        /// Failed for good (it may still have produced earlier pages).
        case failed(String, fallbackFailures: [String])
    }

    /// What became of a `show` for one id, when it was not the detail endpoint's card.
    public enum Detail: Sendable, Equatable {
        /// The source has no detail endpoint; the card comes from the list.
        case noEndpoint
        /// The upstream has no detail for this item (it exists); the list card is shown.
        case unavailable(String)
        /// Fetching the detail failed; the list card is shown.
        case failed(String)
        /// No such item.
        case notFound(String)
    }

    public var status: Status = .live
    public var detail: Detail?
    public var skipped: [SkippedRecord] = []
    public var notes: [String] = []
    /// The source lists what the card store merged from it last (`refresh`): its upstream
    /// confirmed every body that listing was read from, and its cards were not read again.
    public var unchanged = false
    /// How the first page was answered: `refresh -v` says so, as a cron log should.
    public enum Answer: Sendable, Equatable {
        /// From the cache within the source's `cache_ttl`: no request was sent.
        case cacheWithinTTL
        /// The upstream confirmed the cached body (304 Not Modified).
        case revalidated
        /// A body was read (from the upstream, or a fallback tier).
        case read
    }
    public var answer: Answer?
    /// Set when max_pages or max_items ended the walk.
    public var budgetNote: String?
    /// Cards the filter rules left out, by why (`dropped by drop rule {…} (Sources.yml:4:9)`).
    public var ruleDrops: [String: Int] = [:]
    /// The filter rules that ran out of time on this source's cards, in file order (each
    /// gets a line on stderr always: the feed may be missing cards the rule would have
    /// kept, or hold ones it would have dropped).
    public var ruleTimeouts: [RuleTimeout] = []
    /// How the whole articles of `full_content:` went (nil without it).
    public var articles: WholeArticles.Report?

    /// The articles that could not be had, in a line (nil when none failed).
    public var articleFailure: String? {
        guard let articles, articles.failed > 0 else { return nil }
        let tried = articles.fetched + articles.failed
        return "\(articles.failed) of \(tried) whole article\(tried == 1 ? "" : "s") could not be read; "
            + "\(articles.failed == 1 ? "its card keeps" : "their cards keep") the source's own text: \(articles.firstFailure ?? "")"
    }

    /// A filter rule that ran out of time (``CardPattern/timeLimit``) on some cards.
    public struct RuleTimeout: Sendable, Equatable, CustomStringConvertible {
        /// The rule as Sources.yml writes it.
        public var rule: String
        public var location: ConfigLocation
        /// On how many cards it ran out of time.
        public var cards: Int
        /// Whether it was given up for the rest of the run (``RuleJudge/giveUpAfter``).
        public var givenUp: Bool

        public init(rule: String, location: ConfigLocation, cards: Int, givenUp: Bool) {
            self.rule = rule
            self.location = location
            self.cards = cards
            self.givenUp = givenUp
        }

        public var description: String {
            let limit = Int(CardPattern.timeLimit / .milliseconds(1))
            var note = "rule \(rule) (\(location)) ran out of time (\(limit) ms) on \(cards) card\(cards == 1 ? "" : "s") and counted as no match"
            if givenUp {
                note += "; it was not tried on the rest of this source's cards (write it so it cannot backtrack without end: no (.|\\s)*, no (a|aa)*)"
            }
            return note
        }
    }

    public init(id: String, url: URL) {
        self.id = id
        self.url = url
    }

    /// Why the source failed for good, if it did.
    public var failure: String? {
        if case .failed(let message, _) = status { return message }
        return nil
    }

    /// The fallback tier that served the source, if the live upstream did not.
    public var origin: Card.Origin? {
        if case .fallback(let origin, _, _) = status { return origin }
        return nil
    }

    /// How many skipped records are named one by one without `--verbose`.
    public static let skippedLinesShown = 10

    /// Lines for stderr: failures and fallbacks always, notes only when `verbose`.
    public func messages(verbose: Bool) -> [String] {
        var lines: [String] = []
        switch status {
        case .failed(let failure, let fallbackFailures):
            let tried = fallbackFailures.isEmpty || !verbose ? "" : "; fallback failed: \(fallbackFailures.joined(separator: "; "))"
            lines.append("\(id): \(failure)\(tried)")
        case .fallback(_, let liveFailure?, let servedBy):
            lines.append("\(id): \(liveFailure); using \(servedBy)")
        case .fallback, .live:
            break
        }
        switch detail {
        case .unavailable(let reason):
            lines.append("\(id): \(reason); showing the card from the list")
        case .failed(let reason):
            lines.append("\(id): detail unavailable: \(reason); showing the card from the list")
        case .noEndpoint, .notFound, nil:
            break
        }
        // The first few skipped records by name (with `--verbose`, every one), then a count:
        // a body of 60,000 broken records is one screen, not 60,000 lines.
        let named = verbose ? skipped.count : Self.skippedLinesShown
        lines += skipped.prefix(named).map { "\(id): \($0)" }
        if skipped.count > named {
            lines.append("\(id): skipped \(skipped.count - named) more records (\(skipped.count) in all; --verbose lists every one)")
        }
        lines += ruleTimeouts.map { "\(id): \($0)" }
        if let articleFailure { lines.append("\(id): \(articleFailure)") }
        if verbose {
            if let articles, articles.fetched + articles.notTried > 0 {
                let past = articles.notTried > 0
                    ? "; \(articles.notTried) more new card\(articles.notTried == 1 ? "" : "s") past \(WholeArticles.mostPerRun) a run keep the source's text" : ""
                lines.append("\(id): \(articles.fetched) whole article\(articles.fetched == 1 ? "" : "s") fetched\(past)")
            }
            if let articles, articles.failed > 1 {
                lines += articles.failures.map { "\(id): whole article not read: \($0)" }
            }
            lines += notes.map { "\(id): \($0)" }
            if let budgetNote { lines.append("\(id): \(budgetNote)") }
            lines += ruleDrops.sorted { $0.key < $1.key }.map { "\(id): \($0.value) card\($0.value == 1 ? "" : "s") \($0.key)" }
            var served = ""
            if case .fallback(_, _, let servedBy) = status { served = " (\(servedBy))" }
            let total = upstreamTotal.map { $0 > produced ? " (the upstream has \($0))" : "" } ?? ""
            switch (unchanged, answer) {
            case (true, .cacheWithinTTL?):
                lines.append("\(id): answered from the cache within its cache_ttl (no request sent; --refresh asks the upstream): "
                    + "the listing the store holds, its cards seen again")
            case (true, _):
                lines.append("\(id): unchanged since the last refresh (the upstream answered 304 Not Modified); its cards are seen again")
            case (false, .cacheWithinTTL?):
                lines.append("\(id): \(produced) cards from \(pages) page\(pages == 1 ? "" : "s") (from the cache within its cache_ttl, no request sent)\(total)")
            case (false, .revalidated?):
                lines.append("\(id): \(produced) cards from \(pages) page\(pages == 1 ? "" : "s") (the upstream answered 304 Not Modified)\(total)")
            case (false, _):
                lines.append("\(id): \(produced) cards from \(pages) page\(pages == 1 ? "" : "s")\(served)\(total)")
            }
        }
        return lines
    }

    /// Did the source lose anything (failed, a failed detail, or skipped records)?
    public var isDegraded: Bool {
        if failure != nil || !skipped.isEmpty { return true }
        if case .failed? = detail { return true }
        return false
    }
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
