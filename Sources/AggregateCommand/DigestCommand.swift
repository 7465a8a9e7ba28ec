import ArgumentParser
import FeedConfig
import FeedCore
import FeedDigest
import FeedEngine
import FeedState
import FeedSupport
import Foundation
import SameItem

extension DigestConfig.Format: ExpressibleByArgument {}

/// `aggregate digest`: what is new or cheaper since this digest last ran.
struct DigestCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "digest",
        abstract: "Report what is new or cheaper since the last run of a digest (for cron).",
        discussion: """
            The first run of a digest records a baseline and prints nothing. Later runs print \
            only changes; when nothing changed they print nothing and exit 0, so cron sends no mail. \
            State is committed only after the digest was written (at-least-once delivery).
            A digest with deliver: targets sends its report to each of them instead of printing it; \
            a target that fails keeps the report for the next run, and the run exits 1 naming it.
            Exit codes: 0 ok, 1 error or a failed delivery, 2 usage or config error, 3 some source could not be checked, \
            75 the same digest is already running.
            """)

    enum FirstRun: String, ExpressibleByArgument {
        case baseline, report
    }

    @Option(help: ArgumentHelp("The digest: one declared under digests: in Sources.yml, or any new name.", valueName: "name"))
    var name: String?

    @Flag(help: "Run every declared digest whose `every` has elapsed since its last successful run.")
    var due = false

    @Option(name: .customLong("source"), help: ArgumentHelp("Only this source id (repeatable).", valueName: "id"))
    var sources: [String] = []

    @Option(help: "markdown (default), text, html or jsonl; or a card format (atom, rss, jsonfeed, csv, tsv) of the changed cards.")
    var format: DigestConfig.Format?

    @Option(help: ArgumentHelp("Write to this file (atomically) instead of stdout.", valueName: "file"))
    var output: String?

    @Flag(help: "Print what would be reported; remember nothing.")
    var dryRun = false

    @Flag(help: "Print a digest even when nothing changed.")
    var always = false

    @Flag(help: "Also report price rises.")
    var includeRises = false

    @Flag(help: "Also report cards that are gone.")
    var includeRemoved = false

    @Option(help: "On a digest's first run: baseline (record, print nothing) or report (everything is new).")
    var firstRun: FirstRun = .baseline

    @Option(help: "Seconds to wait for another run of the same digest before exiting 75.")
    var wait: Double = 30

    @Option(help: .hidden)
    var date: String?

    @Flag(name: .customLong("no-record"), help: "Do not record what the upstreams answered in the card store.")
    var noRecord = false

    @OptionGroup var common: CommonOptions

    func validate() throws {
        if due && name != nil { throw ValidationError("give either --name or --due, not both") }
        if !due && name == nil { throw ValidationError("--name NAME is required (or --due)") }
        if name?.isEmpty == true { throw ValidationError("--name must not be empty: give the digest a name such as daily") }
        if let name, !name.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }) {
            throw ValidationError("digest names use lowercase letters, digits and -, got \"\(name)\"")
        }
        if date != nil && date.flatMap(RFC3339.date(from:)) == nil { throw ValidationError("--date takes an RFC 3339 time") }
    }

    func run(in context: CommandContext) async throws {
        let now = date.flatMap(RFC3339.date(from:)) ?? Date()
        let status = try await common.withRunner(context.registry, stateRequired: true) { runner, config, state -> ExitStatus in
            guard let store = state?.digestStore else { return .failed }
            let digests = try await selected(config, store: store, now: now)
            var worst = ExitStatus.ok
            for digest in digests {
                let status = await run(digest, stdout: context.stdout, runner: runner, store: store, state: state, now: now)
                if status.rawValue > worst.rawValue || status == .busy { worst = status }
            }
            return worst
        }
        if status != .ok { throw status.code }
    }

    /// The declared digest named, an ad-hoc one, or every due one.
    private func selected(_ config: FeedConfig, store: any DigestStore, now: Date) async throws -> [DigestConfig] {
        if due {
            // Scheduled from cron, a --due that can never do anything is a mistake to say
            // at once, not a silent success every night.
            if config.digests.isEmpty {
                Terminal.writeError("aggregate: --due runs the digests declared under digests: in \(config.file), and it declares none; "
                    + "declare one (docs/digests.md), or run one with --name NAME")
                throw ExitStatus.usage.code
            }
            var dueDigests: [DigestConfig] = []
            for digest in config.digests {
                let last = try await DigestJob.lastSuccess(of: digest.name, in: store)
                if DigestJob.isDue(digest, lastSuccess: last, now: now) { dueDigests.append(digest) }
            }
            if dueDigests.isEmpty && common.verbose { Terminal.writeError("aggregate: no digest is due") }
            return dueDigests
        }
        var digest = name.flatMap(config.digest(named:)) ?? DigestConfig(name: name ?? "digest")
        if !sources.isEmpty { digest.sources = sources }
        if let format { digest.format = format }
        if let output {
            guard digest.deliver.isEmpty else {
                throw UsageError("digest '\(digest.name)' delivers to its deliver: targets; --output is for a digest without them (or add {file: \(output)} to deliver:)")
            }
            digest.output = output
        }
        return [digest]
    }

    private func run(_ digest: DigestConfig, stdout: StandardOutput, runner: FeedRunner, store: any DigestStore, state: EngineState?,
                     now: Date) async -> ExitStatus {
        let identity = state?.identity ?? .random()
        var job = DigestJob(digest: digest, options: DigestOptions(
            reportFirstRun: firstRun == .report, includeRises: includeRises, includeRemoved: includeRemoved,
            maxItems: digest.maxItems))
        job.dryRun = dryRun
        job.always = always
        job.now = now
        job.cards = state?.cards
        job.recordsCards = !noRecord
        do {
            if runner.config.mergesSameItems { job.items = ItemDecisions(try await state?.items.itemDecisions() ?? []) }
            let template = try digest.template.map { path throws(DigestTemplateError) in try DigestTemplate(path: path) }
            let result = try await job.run(runner: runner, store: store, template: template, wait: wait,
                                           output: digest.output.map(DigestOutput.file) ?? .stdout,
                                           targets: digest.deliver.map { $0.target(digest: digest.name, identity: identity) }) { text in
                try stdout.deliver(text)
            }
            result.messages.forEach { Terminal.writeError($0) }
            result.failedDeliveries.forEach { Terminal.writeError("aggregate: \($0)") }
            if !result.failedDeliveries.isEmpty { return .failed }
            return result.partial ? .partial : .ok
        } catch let error as DigestJob.Failure {
            Terminal.writeError("aggregate: \(error)")
            if case .busy = error { return .busy }
            return .failed
        } catch let error as UsageError {
            Terminal.writeError("aggregate: \(error)")
            return .usage
        } catch {
            Terminal.writeError("aggregate: digest '\(digest.name)' failed: \(PlainWords.describe(error)); nothing was committed")
            return .failed
        }
    }
}
