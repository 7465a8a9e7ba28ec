import ArgumentParser
import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import Foundation

/// Exit codes, documented in docs/command-line.md.
enum ExitStatus: Int32 {
    case ok = 0
    /// Every selected source failed, the item was not found, or an internal error.
    case failed = 1
    /// Usage or configuration error.
    case usage = 2
    /// Partial: some sources failed or lost records; the others printed.
    case partial = 3
    /// The same digest is already running (EX_TEMPFAIL).
    case busy = 75
    /// stdout's reader went away (`| head`): as a tool stopped by SIGPIPE (128 + 13).
    case readerGone = 141

    init(_ status: RunStatus) {
        switch status {
        case .ok: self = .ok
        case .partial: self = .partial
        case .failed: self = .failed
        }
    }

    var code: ExitCode { ExitCode(rawValue) }
}

/// The `aggregate` command. A package that builds "aggregate plus its own sources" calls
/// ``main(sources:)`` with the built-in catalogue and its sources (see Examples/).
public struct Aggregate: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "aggregate",
        abstract: "Fetch several upstream feeds concurrently and print one merged feed of cards.",
        discussion: """
            Sources and their settings are declared in Sources.yml (--config, else ./Sources.yml, \
            else $XDG_CONFIG_HOME/aggregate/Sources.yml). Cards go to stdout, one per line \
            (JSON Lines when piped, aligned text on a terminal); everything for people goes to stderr.

            Exit codes: 0 ok, 1 every source failed or not found, 2 usage or config error, \
            3 partial (some sources failed or skipped records), 75 digest already running,
            141 stdout closed by its reader (| head).
            """,
        version: AggregateVersion.current,
        subcommands: [FeedCommand.self, ShowCommand.self, SourcesCommand.self, ValidateCommand.self, DigestCommand.self,
                      RecordCommand.self, ServeCommand.self, ImportCommand.self, AddCommand.self, RemoveCommand.self, DisableCommand.self, EnableCommand.self, InitCommand.self, RefreshCommand.self, BackupCommand.self, RestoreCommand.self, HistoryCommand.self,
                      StoreCommand.self, MarkCommand.self, SearchCommand.self, UserCommand.self, SameCommand.self, ApartCommand.self, ItemCommand.self],
        defaultSubcommand: FeedCommand.self
    )

    public init() {}

    /// Runs the command line with `sources` as the plugins it knows (the built-in catalogue,
    /// plus a package's own).
    ///
    /// Parses and runs, mapping every error to the documented exit codes: argument
    /// errors exit 2 (not ArgumentParser's 64), and no error ever prints a stack trace.
    /// A failed output decides the status over what the command found.
    /// `demo`: the Sources.yml `aggregate init --demo` writes, for a build that has one.
    public static func main(sources: [any FeedSource.Type], demo: String? = nil) async {
        let context = CommandContext(registry: SourceRegistry(sources), stdout: StandardOutput(), demo: demo)
        do {
            var command = try parseAsRoot(CommonOptionsFirst.reorder(Array(CommandLine.arguments.dropFirst())))
            if let command = command as? any ContextCommand {
                try await command.run(in: context)
            } else if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            if let status = context.stdout.status { Foundation.exit(status.rawValue) }
        } catch let code as ExitCode {
            Foundation.exit(context.stdout.status?.rawValue ?? code.rawValue)
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                print(message)
                Foundation.exit(0)
            }
            Terminal.writeError(message)
            Foundation.exit(code == .validationFailure ? ExitStatus.usage.rawValue : code.rawValue)
        }
    }
}

/// `aggregate --config X show ID`, as with git and gh: common options written before the
/// subcommand are moved after it, where ArgumentParser reads them.
enum CommonOptionsFirst {
    /// Every value option of ``CommonOptions`` and ``CardFormatOptions``: add a new one here too.
    static let valueOptions: Set<String> = ["--config", "--state", "--state-dir", "--format"]
    static let flags: Set<String> = ["--offline", "--strict", "--refresh", "--verbose", "-v"]

    static func reorder(_ arguments: [String]) -> [String] {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if valueOptions.contains(argument) {
                index += 2
            } else if flags.contains(argument) || valueOptions.contains(where: { argument.hasPrefix($0 + "=") }) {
                index += 1
            } else {
                // An option is no subcommand: the feed command's own (`--stored`) end the
                // search before every subcommand's configuration is built to be asked.
                guard index > 0, !argument.hasPrefix("-"),
                      let command = Aggregate.configuration.subcommands.first(where: { $0.configuration.commandName == argument })
                else { return arguments }
                // `aggregate --state X user add ann`: a subcommand's own subcommand goes with it.
                let nested = command.configuration.subcommands.compactMap { $0.configuration.commandName }
                if index + 1 < arguments.count, nested.contains(arguments[index + 1]) {
                    return [argument, arguments[index + 1]] + arguments[..<index] + arguments[(index + 2)...]
                }
                return [argument] + arguments[..<index] + arguments[(index + 1)...]
            }
        }
        return arguments
    }
}
