import FeedConfig
import FeedCore
import FeedEngine
import FeedState
import FeedSupport
import Foundation
import SameItem

/// One run of one digest: fetch, compare with the digest's memory, render, deliver and
/// commit the new memory in one transaction. See ``DigestOutput`` for what each output
/// guarantees when a run is killed; a failed delivery commits nothing.
public struct DigestJob: Sendable {
    public var digest: DigestConfig
    public var options: DigestOptions
    public var dryRun = false
    /// Print a digest even when nothing changed.
    public var always = false
    public var now = Date()

    public init(digest: DigestConfig, options: DigestOptions) {
        self.digest = digest
        self.options = options
    }

    public struct Result: Sendable {
        /// Changes reported (0 when nothing was printed or written).
        public var reported: Int
        /// Lines for stderr: baseline, unavailable sources, deferred changes.
        public var messages: [String]
        /// Some source could not be checked.
        public var partial: Bool
        /// One line per `deliver:` target that did not take its reports (they wait for
        /// the next run), naming the target and why.
        public var failedDeliveries: [String] = []
    }

    /// Where the cards are kept (nil: nowhere, each row of the digest keeps its own copy),
    /// and whether this run records what it fetched there (`--no-record` does not).
    public var cards: (any CardStore)?
    public var recordsCards = true
    /// `merge: same-item`: the digest watches items, not each source's copy (with these
    /// decisions); an alert names the shop whose offer is cheapest. Nil: each card alone.
    public var items: ItemDecisions?

    public enum Failure: Error, Sendable, CustomStringConvertible {
        case busy(String)
        case delivery(String)

        public var description: String {
            switch self {
            case .busy(let name): "digest '\(name)' is already running"
            case .delivery(let reason): reason
            }
        }
    }

    /// Runs the digest. Without `targets`, `printer` prints the rendered text (or `output`
    /// names a file). With `targets` (the digest's `deliver:`), the report is committed with
    /// one copy owed to each target, then every owed report is sent; a target that fails
    /// keeps its reports for the next run while the others are not sent again.
    public func run(runner: FeedRunner, store: any DigestStore, template: DigestTemplate?, wait: Double,
                    output: DigestOutput, targets: [any DeliveryTarget] = [], printer: (String) throws -> Void) async throws -> Result {
        // One run of a digest at a time, across every process sharing the store.
        try await store.withLock(digest: digest.name, wait: wait) { lock in
            guard !targets.isEmpty, !dryRun else {
                return try await runLocked(runner: runner, store: store, lock: lock, template: template, output: output, targets: [],
                                           printer: printer)
            }
            var result: Result
            do {
                result = try await runLocked(runner: runner, store: store, lock: lock, template: template, output: output, targets: targets,
                                             printer: printer)
            } catch {
                // What earlier runs owe is still sent when this run's fetch fails.
                _ = try? await deliverOwed(store: store, targets: targets)
                throw error
            }
            let (failures, notes) = try await deliverOwed(store: store, targets: targets)
            result.failedDeliveries = failures
            result.messages += notes
            return result
        }
    }

    /// Sends every report owed to a target, oldest first; a target that fails is not asked
    /// again this run (its later reports wait behind the one that failed), and a target
    /// that holds one report (a file) is given one per run (the next would replace it).
    private func deliverOwed(store: any DigestStore, targets: [any DeliveryTarget]) async throws -> (failures: [String], notes: [String]) {
        let owed = try await store.owed(by: digest.name)
        // A report owed to a file deliver: no longer lists (or to an earlier run's
        // --output) still goes to that file: a file needs nothing but its path.
        var targets = targets
        for report in owed where !targets.contains(where: { $0.key == report.target || $0.formerKeys.contains(report.target) }) {
            if let path = FileTarget.path(ofKey: report.target) { targets.append(FileTarget(path: path)) }
        }
        var failed: [String: DeliveryFailure] = [:]
        var filled: Set<String> = []
        var notes: [String] = []
        for report in owed {
            guard let target = targets.first(where: { $0.key == report.target || $0.formerKeys.contains(report.target) }) else {
                // A webhook or program taken out of deliver:; there is nowhere to send it.
                try await store.delivered(report, digest: digest.name)
                notes.append("digest '\(digest.name)': a report for \(report.target), which deliver: no longer lists, is dropped")
                continue
            }
            if failed[target.key] != nil || filled.contains(target.key) { continue }
            do throws(DeliveryFailure) {
                try await target.deliver(report.payload, reportID: report.reportID)
            } catch {
                failed[target.key] = error
                continue
            }
            try await store.delivered(report, digest: digest.name)
            if target.holdsOneReport { filled.insert(target.key) }
        }
        for target in targets where filled.contains(target.key) {
            let waiting = owed.filter { $0.target == target.key || target.formerKeys.contains($0.target) }.count - 1
            if waiting > 0 {
                notes.append("digest '\(digest.name)': \(target.name) holds one report at a time, so \(waiting == 1 ? "the next report waits" : "\(waiting) more reports wait") for the next run")
            }
        }
        let failures = targets.compactMap { target -> String? in
            guard let failure = failed[target.key] else { return nil }
            let waiting = owed.filter { $0.target == target.key || target.formerKeys.contains($0.target) }.count
            let kind = if case .permanent = failure { "refused" } else { "failed" }
            return "digest '\(digest.name)': delivery to \(target.name) \(kind): \(failure); \(waiting == 1 ? "the report waits" : "\(waiting) reports wait") for the next run"
        }
        return (failures, notes)
    }

    private func runLocked(runner: FeedRunner, store: any DigestStore, lock: DigestLock, template: DigestTemplate?,
                           output: DigestOutput, targets: [any DeliveryTarget], printer: (String) throws -> Void) async throws -> Result {
        // A file the previous run committed but did not finish is delivered first, alone:
        // writing this run's report straight after would replace it unseen.
        if !dryRun, targets.isEmpty,
           let pending = try await store.owed(by: digest.name).first(where: { FileTarget.path(ofKey: $0.target) != nil }),
           let pendingPath = FileTarget.path(ofKey: pending.target) {
            return try await finish(pending, owedTo: pendingPath, store: store, output: output, printer: printer)
        }

        let collected = try await runner.collect(digest.sources)
        let outcomes = collected.outcomes
        let cards = items.map { ItemMerge.merged(collected.cards, decisions: $0) } ?? collected.cards
        // The fetch's cache writes land before the commit: whatever they say on stderr
        // comes before what the digest says.
        await runner.finishWrites()
        var messages: [String] = []
        let kept = try await keptCards(collected.listings, sources: try runner.select(digest.sources).map(\.id), messages: &messages)
        var unavailable: [(source: String, reason: String)] = []
        for outcome in outcomes {
            switch outcome.status {
            case .failed(let failure, _):
                unavailable.append((outcome.id, failure))
            case .fallback(.snapshot, let liveFailure, _):
                unavailable.append((outcome.id, "\(liveFailure ?? "offline"); only the recorded snapshot was available"))
            case .fallback(.cache, _, _), .live:
                break
            }
        }
        let available = outcomes.map(\.id).filter { id in !unavailable.contains { $0.source == id } }
        messages += unavailable.map { "\($0.source): not checked: \($0.reason)" }

        let memory = try await store.memory(of: digest.name, cards: kept)
        var plan = DigestPlan.make(memory: memory.entries, cards: cards, available: available,
                                   knownSources: memory.knownSources, options: options, conditions: digest.when, now: now)
        plan.cardStoreHolds = Set(plan.writes.map(\.cardID).filter { kept[$0] != nil })
        if available.isEmpty && !outcomes.isEmpty {
            messages.append("digest '\(digest.name)': no source could be checked, so nothing was compared and no baseline was recorded; run it again with the network (recorded snapshots are never news)")
        }
        if plan.baselineCount > 0 {
            messages.append("digest '\(digest.name)': baseline of \(plan.baselineCount) cards recorded; the next run reports changes")
        }
        if plan.deferred > 0 {
            messages.append("digest '\(digest.name)': \(plan.deferred) more changes wait for the next run (max_items: \(options.maxItems ?? 0))")
        }
        // Cheapest anywhere: an alert on an item says which shop's offer it is.
        let items = plan.items.map { item in
            guard item.change == .alert, let shop = ItemMerge.cheapestElsewhere(item.card) else { return item }
            var named = item
            named.condition = (item.condition ?? "") + ", cheapest at \(shop)"
            return named
        }
        let report = DigestReport(name: digest.name, date: now, items: items, unavailable: unavailable)
        let text = !report.items.isEmpty || always
            ? template?.render(report) ?? DigestRenderer.render(report, format: digest.format) : nil
        if !targets.isEmpty {
            // One id for the report, the same at every target and in every retry.
            let reportID = UUID().uuidString.lowercased()
            let outbox = text.map { text in
                targets.map { OutgoingReport(target: $0.key, reportID: reportID, created: now, payload: $0.payload(for: report, text: text)) }
            } ?? []
            try await store.commit(plan, under: lock, now: now, outbox: outbox)
            return Result(reported: report.items.count, messages: messages, partial: !unavailable.isEmpty)
        }
        switch (output, text) {
        case (.file(let path), let text?) where !dryRun:
            // The file's report is committed to the outbox with the state, then written, then
            // marked delivered; a run killed in between leaves it owed to the next run. The
            // text is written beside the file first, so a path that cannot take it fails
            // the run before anything is committed.
            let prepared = try DigestOutput.prepare(text, for: path)
            let owed = OutgoingReport(target: FileTarget.key(path: path), reportID: UUID().uuidString.lowercased(), created: now,
                                      payload: DeliveryPayload(body: text))
            do {
                try await store.commit(plan, under: lock, now: now, outbox: [owed])
            } catch {
                if case .temporary(let temporary, _) = prepared { try? FileManager.default.removeItem(at: temporary) }
                throw error
            }
            try DigestOutput.publish(prepared)
            try await store.delivered(owed, digest: digest.name)
        case (.file(let path), let text?):
            try DigestOutput.writeFile(text, to: path)
        case (.stdout, let text?):
            try printer(text)
            if !dryRun { try await store.commit(plan, under: lock, now: now, outbox: []) }
        case (_, nil):
            if !dryRun { try await store.commit(plan, under: lock, now: now, outbox: []) }
        }
        return Result(reported: report.items.count, messages: messages, partial: !unavailable.isEmpty)
    }

    /// Records what this run answered live in the card store, then reads the cards it keeps
    /// of the digest's sources: the digest's own rows hold no copy of those. A store that
    /// cannot be read fails the run before anything is compared or committed (its rows
    /// would be missing their cards, and come back as new); one that cannot be written is
    /// said, and read.
    private func keptCards(_ listings: [LiveListing], sources: [String], messages: inout [String]) async throws -> [String: Card] {
        guard let cards else { return [:] }
        if recordsCards, !dryRun, !listings.isEmpty {
            do {
                try await cards.record(listings)
            } catch {
                messages.append("aggregate: warning: cannot record the cards in the card store (\(PlainWords.describe(error))); the digest compares as before")
            }
        }
        var kept: [String: Card] = [:]
        for card in try await cards.cards(of: sources) { kept[card.card.id] = card.card }
        return kept
    }

    /// Delivers a file report an earlier run committed and did not finish: to its file unless
    /// the file holds it already; when that path cannot take it any more, to this run's
    /// output instead (another file, or stdout), so the report is never dropped.
    private func finish(_ pending: OutgoingReport, owedTo path: String, store: any DigestStore, output: DigestOutput,
                        printer: (String) throws -> Void) async throws -> Result {
        let text = pending.payload.body
        var delivered = path
        if !DigestOutput.holds(text, at: path) {
            do {
                try DigestOutput.writeFile(text, to: path)
            } catch let failure as Failure {
                switch output {
                case .file(let other) where other != path:
                    try DigestOutput.writeFile(text, to: other)
                    delivered = other
                case .stdout:
                    try printer(text)
                    delivered = "stdout"
                default:
                    throw Failure.delivery("\(failure.description); the report an earlier run committed for \(path) waits for it: "
                        + "fix that path, or run again with another --output (or none, to print it)")
                }
            }
        }
        try await store.delivered(pending, digest: digest.name)
        let instead = delivered == path ? "" : " (it could not go to \(path))"
        return Result(reported: 0, messages: [
            "digest '\(digest.name)': delivered to \(delivered) what the interrupted previous run had committed\(instead); new changes come with the next run",
        ], partial: false)
    }

    /// Whether a declared digest with `every` is due, given its last successful run.
    public static func isDue(_ digest: DigestConfig, lastSuccess: Date?, now: Date) -> Bool {
        guard let every = digest.every else { return false }
        guard let lastSuccess else { return true }
        return now.timeIntervalSince(lastSuccess) >= every
    }

    public static func lastSuccess(of name: String, in store: any DigestStore) async throws -> Date? {
        try await store.memory(of: name, cards: [:]).lastSuccess
    }
}
