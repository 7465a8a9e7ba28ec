import ArgumentParser
import FeedCore
import FeedEngine
import FeedSupport
import Foundation

/// `aggregate record SOURCE`: save what the live upstream answers as snapshot files.
struct RecordCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a source's live responses into snapshot files (for its Snapshots/ folder).",
        discussion: """
            Walks the source's pages as a run would (same URLs, headers and retries), writes each \
            response body to DIR/<name>.json and prints the lines to paste into the module's \
            `snapshots` list, each with the exact URL it answers.
            """)

    @Argument(help: ArgumentHelp("The source id in Sources.yml.", valueName: "source"))
    var sourceID: String

    @Option(help: ArgumentHelp("Folder to write the files into.", valueName: "dir"))
    var into: String

    @Option(help: "Pages to record, from the first.")
    var pages = 1

    @Option(name: .customLong("detail"), help: ArgumentHelp("Also record the detail of this upstream id (repeatable).", valueName: "id"))
    var detailIDs: [String] = []

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard (1...100).contains(pages) else { throw ValidationError("--pages must be between 1 and 100, got \(pages)") }
    }

    func run(in context: CommandContext) async throws {
        let config = try common.loadConfig(context.registry)
        guard let source = config.sources.first(where: { $0.id == sourceID }) else {
            Terminal.writeError("aggregate: unknown source \"\(sourceID)\" in \(config.file) (known: \(config.sources.map(\.id).joined(separator: ", ")))")
            throw ExitStatus.usage.code
        }
        guard let type = context.registry.types.first(where: { $0.plugin == source.plugin }) else {
            Terminal.writeError("aggregate: \(sourceID): plugin \"\(source.plugin)\" has no module to record with")
            throw ExitStatus.usage.code
        }
        let live = LiveHTTPTransport()
        let recordings: [SnapshotRecorder.Recording]
        do {
            recordings = try await SnapshotRecorder(config: source, type: type, live: live, logger: common.logger)
                .record(pages: pages, detailIDs: detailIDs)
            await live.shutdown()
        } catch {
            await live.shutdown()
            Terminal.writeError("\(sourceID): cannot record: \(PlainWords.describe(error))")
            throw ExitStatus.failed.code
        }
        let folder = URL(fileURLWithPath: into)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for recording in recordings {
            try recording.body.write(to: folder.appendingPathComponent(recording.fileName))
            let resource = recording.fileName.replacingOccurrences(of: ".", with: "_").replacingOccurrences(of: "-", with: "_")
            let status = recording.status == 200 ? "" : "status: \(recording.status), "
            context.stdout.write("RecordedResponse(url: \"\(recording.url.redactedString)\", \(status)bytes: PackageResources.\(resource)),\n")
            Terminal.writeError("\(sourceID): wrote \(folder.appendingPathComponent(recording.fileName).path) (\(recording.body.count) bytes, HTTP \(recording.status))")
        }
        if recordings.contains(where: { $0.url.redactedString != $0.url.absoluteString }) {
            Terminal.writeError("\(sourceID): a recorded URL carries a secret, printed as REDACTED; snapshots match the URL the source asks for, so keep secrets in headers instead")
        }
    }
}
