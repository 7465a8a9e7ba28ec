import ArgumentParser
import FeedConfig
import Foundation

/// `aggregate remove ID…`: sources out of Sources.yml through the same checked whole-file
/// edit as `add` and `import` (the new text must read back as the old less exactly that
/// entry, and load, before it replaces the file); the rest of the file untouched.
struct RemoveCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove sources from Sources.yml by their ids.",
        discussion: """
            Each entry goes with its lines (a comment just above the next entry stays with that one). Every id \
            must be configured, or nothing is removed. A removal the file would not load after (a digest that \
            names the source) is refused with the loader's reason, and the file is left as it was. What the card \
            store kept of a removed source stays until `aggregate store purge` or its retention.
            """)

    @Argument(help: ArgumentHelp("The ids of the sources to remove, as `aggregate sources` lists them.", valueName: "id"))
    var ids: [String]

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard !ids.isEmpty else { throw ValidationError("name the sources to remove by their ids (`aggregate sources` lists them)") }
    }

    func run(in context: CommandContext) async throws {
        let configured = Set(try common.sourcesFile(context.registry).config.sources.map(\.id))
        let unknown = ids.filter { !configured.contains($0) }
        guard unknown.isEmpty else {
            throw common.usage("no source\(unknown.count == 1 ? " has the id" : "s have the ids") \(unknown.joined(separator: ", ")) (`aggregate sources` lists them); nothing was removed")
        }
        var removed = Set<String>()
        for id in ids where removed.insert(id).inserted {
            // Read again for each: the file the next removal checks against is the one just written.
            let sources = try common.sourcesFile(context.registry)
            do {
                try sources.change(id, to: nil)
            } catch {
                Terminal.writeError("aggregate: \(id) was not removed: \(error.description)")
                throw error.isUsage ? ExitStatus.usage.code : ExitStatus.failed.code
            }
            Terminal.writeError("aggregate: removed \(id) from \(sources.config.file)")
        }
    }
}

/// `aggregate disable ID…` and `aggregate enable ID…`: a source kept in Sources.yml but not
/// read, or read again, by one line of the file (``SourcesFileEdit/enabling(_:_:in:file:)``).
protocol EnablingCommand: ContextCommand {
    /// What the command makes of the sources.
    static var enables: Bool { get }
    var ids: [String] { get }
    var common: CommonOptions { get }
}

extension EnablingCommand {
    func validate() throws {
        guard !ids.isEmpty else { throw ValidationError("name the sources by their ids (`aggregate sources` lists them)") }
    }

    func run(in context: CommandContext) async throws {
        try common.setEnabled(ids, Self.enables, registry: context.registry)
    }
}

struct DisableCommand: EnablingCommand {
    static let configuration = CommandConfiguration(
        commandName: "disable",
        abstract: "Keep sources in Sources.yml but stop reading them (enabled: false).",
        discussion: "Every id must be configured, or nothing is changed. `aggregate enable ID` reads them again.")
    static let enables = false

    @Argument(help: ArgumentHelp("The ids of the sources, as `aggregate sources` lists them.", valueName: "id"))
    var ids: [String]

    @OptionGroup var common: CommonOptions
}

struct EnableCommand: EnablingCommand {
    static let configuration = CommandConfiguration(
        commandName: "enable",
        abstract: "Read disabled sources of Sources.yml again.",
        discussion: "Every id must be configured, or nothing is changed.")
    static let enables = true

    @Argument(help: ArgumentHelp("The ids of the sources, as `aggregate sources` lists them.", valueName: "id"))
    var ids: [String]

    @OptionGroup var common: CommonOptions
}

extension CommonOptions {
    /// `enable` and `disable`: each source changed through the checked whole-file edit.
    func setEnabled(_ ids: [String], _ enabled: Bool, registry: SourceRegistry) throws {
        let word = enabled ? "enabled" : "disabled"
        let configured = try sourcesFile(registry).config
        let unknown = ids.filter { configured.source(id: $0) == nil }
        guard unknown.isEmpty else {
            throw usage("no source\(unknown.count == 1 ? " has the id" : "s have the ids") \(unknown.joined(separator: ", ")) (`aggregate sources` lists them); nothing was changed")
        }
        var done = Set<String>()
        for id in ids where done.insert(id).inserted {
            // Read again for each: the next change is checked against the file just written.
            let sources = try sourcesFile(registry)
            if sources.config.source(id: id)?.enabled == enabled {
                Terminal.writeError("aggregate: \(id) is already \(word)")
                continue
            }
            do {
                try sources.setEnabled(id, enabled)
            } catch {
                Terminal.writeError("aggregate: \(id) was not \(word): \(error.description)")
                throw error.isUsage ? ExitStatus.usage.code : ExitStatus.failed.code
            }
            Terminal.writeError("aggregate: \(word) \(id) in \(sources.config.file)")
        }
    }
}
