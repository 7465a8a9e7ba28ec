import ArgumentParser
import FeedConfig
import FeedEngine
import Foundation

/// `aggregate backup FILE`: a consistent copy of the state (accounts, marks, digests, the
/// card store), taken while `serve` runs.
struct BackupCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write a consistent copy of the state (accounts, marks, digests, the card store) to a file.",
        discussion: """
            Safe while `serve` and `refresh` run: each database is copied with SQLite's VACUUM INTO, and the file \
            (a tar archive) replaces FILE whole. The HTTP cache is left out. `aggregate restore FILE` reads it back. \
            A PostgreSQL state is backed up with pg_dump (the error says how).
            """)

    @Argument(help: ArgumentHelp("The file to write (replaced whole when it exists).", valueName: "file"))
    var file: String

    @OptionGroup var common: CommonOptions

    func run(in context: CommandContext) async throws {
        try common.withStateLocation(context.registry, doing: "backup") { location in
            let names = try StateBackups.backUp(location, to: URL(fileURLWithPath: file))
            return "backed up \(names.joined(separator: ", ")) from \(location) to \(file)"
        }
    }
}

/// `aggregate restore FILE`: a backup read into a state that holds none yet.
struct RestoreCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Read a backup into the state; the state must hold none yet.",
        discussion: """
            Each database is checked before it is put in place. A state already there is never overwritten: move it \
            away first, or restore into another --state-dir.
            """)

    @Argument(help: ArgumentHelp("The backup `aggregate backup` wrote.", valueName: "file"))
    var file: String

    @OptionGroup var common: CommonOptions

    func run(in context: CommandContext) async throws {
        try common.withStateLocation(context.registry, doing: "restore") { location in
            let names = try StateBackups.restore(location, from: URL(fileURLWithPath: file))
            return "restored \(names.joined(separator: ", ")) from \(file) to \(location)"
        }
    }
}

extension CommonOptions {
    /// Runs `body` on where the state is, saying what it did, or why not: exit 2 for the
    /// request, 1 for the machine.
    func withStateLocation(_ registry: SourceRegistry, doing what: String, _ body: (StateLocation) throws -> String) throws {
        let location = try stateLocation(loadConfig(registry))
        do {
            Terminal.writeError("aggregate: " + (try body(location)))
        } catch let failure as StateBackups.Failure {
            Terminal.writeError("aggregate: \(what): \(failure.description)")
            throw failure.isUsage ? ExitStatus.usage.code : ExitStatus.failed.code
        }
    }
}
