import ArgumentParser
import FeedConfig
import FeedCore
import FeedEngine
import FeedFormats
import FeedSupport
import Foundation
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the process is attached to: whether stdout is a terminal, its width, colour.
enum Terminal {
    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// The width to fit text to: `COLUMNS`, else the terminal's, else none.
    static var width: Int? {
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 {
            return columns
        }
        guard stdoutIsTerminal else { return nil }
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// Colour only on a terminal, and never with `NO_COLOR` set (https://no-color.org).
    static var useColor: Bool {
        stdoutIsTerminal && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
    }

    /// One message for people on stderr. Messages quote what upstreams and receivers said
    /// (an error body, a title, a header value), so each of its lines goes through the
    /// filter card text goes through: no escape sequence or carriage return reaches the
    /// terminal, and no line of it can pass for a line of its own.
    static func writeError(_ text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { TerminalText.safe(String($0)) }
        var message = lines.joined(separator: "\n")
        if !message.hasSuffix("\n") { message += "\n" }
        FileHandle.standardError.write(Data(message.utf8))
    }
}

/// The process's stdout as the command writes it: a failed write stops the output, and
/// decides the exit status (``status``) over what the command found.
final class StandardOutput: Sendable {
    /// 0 writing, 1 reader gone, 2 failed.
    private let state = Atomic<UInt8>(0)

    init() {}

    func write(_ text: String) {
        write(bytes: Array(text.utf8))
    }

    /// Writes all of `bytes` to stdout. A failed write stops the output: silently when the
    /// reader has gone (`aggregate --all | head`), with one line on stderr otherwise (a
    /// full disk).
    func write(bytes: [UInt8]) {
        guard !bytes.isEmpty, state.load(ordering: .relaxed) == 0 else { return }
        do {
            _ = try FileDescriptor.standardOutput.writeAll(bytes)
        } catch Errno.brokenPipe {
            state.store(1, ordering: .relaxed)
        } catch {
            state.store(2, ordering: .relaxed)
            Terminal.writeError("aggregate: cannot write the output: \(PlainWords.describe(error))")
        }
    }

    /// Writes `text`, throwing when it did not all reach stdout: for output that must not
    /// be taken as delivered when it was not (a digest commits only what it printed).
    func deliver(_ text: String) throws(Failure) {
        write(text)
        if status != nil { throw Failure() }
    }

    /// The output did not reach stdout (its reader went, or a write failed).
    struct Failure: Error, CustomStringConvertible {
        var description: String { "the output could not be written to stdout" }
    }

    /// The exit status a failed output imposes, if any: as a tool stopped by SIGPIPE when
    /// the reader went (141), 1 when a write failed.
    var status: ExitStatus? {
        switch state.load(ordering: .relaxed) {
        case 1: .readerGone
        case 2: .failed
        default: nil
        }
    }
}

/// What every command runs with, handed in by ``Aggregate/main(sources:)``: the source
/// plugins this binary knows, and stdout.
struct CommandContext: Sendable {
    let registry: SourceRegistry
    let stdout: StandardOutput
    /// The Sources.yml `init --demo` writes (nil: this build has none).
    var demo: String?
}

/// A subcommand run with its ``CommandContext`` (ArgumentParser makes the commands from
/// the arguments; what they need besides is handed to ``run(in:)``).
protocol ContextCommand: AsyncParsableCommand {
    func run(in context: CommandContext) async throws
}

extension ContextCommand {
    /// Never called: ``Aggregate/main(sources:)`` calls ``run(in:)``.
    func run() async throws {
        throw ExitStatus.failed.code
    }
}
