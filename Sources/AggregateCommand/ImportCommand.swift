import ArgumentParser
import FeedConfig
import FeedCore
import FeedEngine
import FeedSupport
import Foundation

/// `aggregate import FILE.opml`: the feeds of a subscription list as `plugin: feed`
/// entries at the end of Sources.yml, the rest of the file untouched.
struct ImportCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add the feeds of an OPML subscription list to Sources.yml (one plugin: feed entry each).",
        discussion: """
            Each outline with an xmlUrl becomes an entry; its folders become the tags option. A feed whose URL \
            is already configured is reported and skipped, so importing a list twice, or an export of this \
            file, adds nothing. The file keeps its text and comments; the entries are checked before it is written.
            """)

    @Argument(help: "The OPML file (as exported by a feed reader).")
    var file: String

    @Flag(help: "Print the entries instead of adding them.")
    var dryRun = false

    @OptionGroup var common: CommonOptions

    func run(in context: CommandContext) async throws {
        guard let data = FileManager.default.contents(atPath: file) else {
            Terminal.writeError("aggregate: cannot read \(file): no such file, or not readable")
            throw ExitStatus.usage.code
        }
        let subscriptions: [OPML.Subscription]
        do {
            subscriptions = try OPML.subscriptions(in: data, file: file)
        } catch {
            Terminal.writeError("\(error.description) (an OPML file from a feed reader's export is expected)")
            throw ExitStatus.usage.code
        }
        let loader = ConfigLoader(registry: context.registry)
        let path = try locate(loader)
        let config = try common.loadConfig(context.registry)
        guard let text = FileManager.default.contents(atPath: path).flatMap({ String(data: $0, encoding: .utf8) }) else {
            Terminal.writeError("aggregate: cannot read \(path)")
            throw ExitStatus.usage.code
        }

        var taken = Set(config.sources.map(\.id))
        var configured = Dictionary(config.sources.map { (Self.key($0.url), $0.id) }, uniquingKeysWith: { first, _ in first })
        var entries: [NewSourceEntry] = []
        let origin = "imported from \(URL(fileURLWithPath: file).lastPathComponent)"
        for subscription in subscriptions {
            if let existing = configured[Self.key(subscription.url)] {
                Terminal.writeError("aggregate: skipped \"\(subscription.title)\": \(subscription.url.redactedString) is already configured as \(existing)")
                continue
            }
            let id = SourcesFileEdit.id(from: subscription.title, taken: taken)
            taken.insert(id)
            configured[Self.key(subscription.url)] = id
            entries.append(NewSourceEntry(id: id, plugin: "feed", url: subscription.url, tags: subscription.folders,
                                          comment: "\(subscription.title) (\(origin))"))
        }
        let added = entries.count
        let skipped = subscriptions.count - added
        guard added > 0 else {
            Terminal.writeError("aggregate: nothing to add: \(subscriptions.isEmpty ? "\(file) lists no feeds" : "every feed in \(file) is configured already")")
            return
        }
        if dryRun {
            context.stdout.write(SourcesFileEdit.yaml(for: entries, indent: SourcesFileEdit.entryIndent(in: text)))
            return
        }
        let updated: String
        do {
            // Read back before it is written: the old document plus exactly these entries.
            updated = try SourcesFileEdit.adding(entries, to: text, file: config.file)
        } catch {
            Terminal.writeError("aggregate: cannot add to \(path): \(error.description); it was left as it was")
            throw ExitStatus.usage.code
        }
        // The new file must load as the old one did: nothing is written otherwise.
        do {
            _ = try loader.load(text: updated, file: config.file, directory: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        } catch {
            Terminal.writeError("aggregate: the imported entries would not load, so \(path) was left as it was:\n\(error.description)")
            throw ExitStatus.usage.code
        }
        // Written whole beside the file (a link's target, when it is one) and renamed over
        // it: a reader sees the old file or the new one, never half of one.
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let temporary = target + ".import-\(ProcessInfo.processInfo.processIdentifier).tmp"
        do {
            try Data(updated.utf8).write(to: URL(fileURLWithPath: temporary))
            let mode = (try FileManager.default.attributesOfItem(atPath: target))[.posixPermissions] ?? 0o644
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: temporary)
            guard rename(temporary, target) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            Terminal.writeError("aggregate: cannot write \(path): \(PlainWords.describe(error)); it was left as it was")
            throw ExitStatus.failed.code
        }
        Terminal.writeError("aggregate: added \(added) feed\(added == 1 ? "" : "s") to \(config.file)\(skipped > 0 ? " (\(skipped) skipped)" : "")")
    }

    private func locate(_ loader: ConfigLoader) throws -> String {
        do {
            return try loader.locate(explicitPath: common.config)
        } catch {
            Terminal.writeError(error.description)
            throw ExitStatus.usage.code
        }
    }

    /// A URL as compared for "already configured": scheme and host in lower case, no
    /// trailing slash.
    static func key(_ url: URL) -> String {
        var text = url.absoluteString
        if let scheme = url.scheme, let host = url.host, let range = text.range(of: "\(scheme)://\(host)", options: .caseInsensitive) {
            text.replaceSubrange(range, with: "\(scheme.lowercased())://\(host.lowercased())")
        }
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
