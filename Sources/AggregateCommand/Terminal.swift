import FeedCore
import FeedEngine
import FeedFormats
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

    static func write(_ text: String) {
        write(bytes: Array(text.utf8))
    }

    /// Set once stdout's reader has gone (`aggregate --all | head`): the rest of the output
    /// is dropped, and the command ends as a tool stopped by SIGPIPE does (exit 141).
    static var readerGone: Bool { outputState.load(ordering: .relaxed) == 1 }
    /// Set once a write to stdout failed otherwise (a full disk): the command exits 1.
    static var outputFailed: Bool { outputState.load(ordering: .relaxed) == 2 }
    /// The exit status a failed output imposes, if any.
    static var outputStatus: ExitStatus? {
        readerGone ? .readerGone : outputFailed ? .failed : nil
    }

    /// 0 writing, 1 reader gone, 2 failed.
    private static let outputState = Atomic<UInt8>(0)

    /// Writes all of `bytes` to stdout. A failed write stops the output: silently when the
    /// reader has gone, with one line on stderr otherwise (a full disk).
    static func write(bytes: [UInt8]) {
        guard !bytes.isEmpty, outputState.load(ordering: .relaxed) == 0 else { return }
        do {
            _ = try FileDescriptor.standardOutput.writeAll(bytes)
        } catch Errno.brokenPipe {
            outputState.store(1, ordering: .relaxed)
        } catch {
            outputState.store(2, ordering: .relaxed)
            writeError("aggregate: cannot write the output: \(PlainWords.describe(error))")
        }
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
