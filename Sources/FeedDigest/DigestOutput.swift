import FeedCore
import FeedSupport
import Foundation
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Where a digest goes. Stdout is at-least-once: a run killed after printing and before
/// its commit prints those changes again. A file is exactly-once: it is a `file` delivery
/// target, so the rendered text is committed to the outbox with the state, then written,
/// then marked delivered; a run killed in between leaves it owed to the next run, which
/// finishes it first and writes it only if the file does not already hold it.
///
/// What `--output PATH` may do to PATH: a regular file (or nothing) is replaced whole, by
/// a temporary file renamed over it, so a reader sees the old file or the new one. A
/// symlink is followed, never replaced: its target is written as above. A character
/// device or a FIFO (`/dev/null`, `/dev/stdout`, a named pipe) is written to, never
/// renamed over. A directory, a socket or a block device is refused before anything is
/// committed.
public enum DigestOutput: Sendable {
    case stdout
    case file(String)

    /// A report on its way to PATH, between ``prepare(_:for:)`` and ``publish(_:)``.
    enum Prepared {
        /// The whole text in a temporary file beside `path`, to be renamed over it.
        case temporary(URL, path: String)
        /// A device or pipe, written to when published.
        case stream(path: String, text: String)
    }

    /// Writes `text` to `path` whole (see the type's rules).
    static func writeFile(_ text: String, to path: String) throws {
        try publish(try prepare(text, for: path))
    }

    /// Whether the regular file at `path` (a link followed) holds `text` already; a
    /// device or pipe never does (and is not read: reading a pipe would wait).
    static func holds(_ text: String, at path: String) -> Bool {
        guard case .file? = try? kind(of: path) else { return false }
        return (try? String(contentsOf: URL(fileURLWithPath: path), encoding: .utf8)) == text
    }

    /// Step one: decides what PATH is and, for a file, writes the text to a temporary file
    /// beside it, so a PATH that cannot be written fails the run before anything is
    /// committed.
    static func prepare(_ text: String, for path: String) throws -> Prepared {
        switch try kind(of: path) {
        case .stream:
            return .stream(path: path, text: text)
        case .file(let real):
            let target = URL(fileURLWithPath: real)
            sweepLeftovers(of: target)
            let temporary = target.deletingLastPathComponent()
                .appendingPathComponent(".\(target.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp")
            do {
                try Data(text.utf8).write(to: temporary)
                return .temporary(temporary, path: real)
            } catch {
                throw DigestJob.Failure.delivery("cannot write \(path): \(PlainWords.describe(error))")
            }
        }
    }

    /// Removes the temporary files (`.NAME.PID.tmp`) that runs killed before their rename
    /// left beside `target`: those whose process is gone. A live one is another run's.
    static func sweepLeftovers(of target: URL) {
        let folder = target.deletingLastPathComponent()
        let prefix = ".\(target.lastPathComponent)."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            guard let pid = Int32(name.dropFirst(prefix.count).dropLast(".tmp".count)), pid > 0 else { continue }
            // kill(pid, 0) sends nothing; ESRCH says no such process.
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
            }
        }
    }

    /// Step two: the temporary file renamed into place, or the text written to the stream.
    static func publish(_ prepared: Prepared) throws {
        switch prepared {
        case .temporary(let temporary, let path):
            // rename(2) replaces the target atomically: a reader sees the old file or the new.
            guard rename(temporary.path, path) == 0 else {
                let reason = Errno(rawValue: errno).description
                try? FileManager.default.removeItem(at: temporary)
                throw DigestJob.Failure.delivery("cannot write \(path): \(reason)")
            }
        case .stream(let path, let text):
            do {
                let descriptor = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.closeOnExec])
                _ = try descriptor.closeAfter { try descriptor.writeAll(Array(text.utf8)) }
            } catch {
                throw DigestJob.Failure.delivery("cannot write \(path): \(PlainWords.describe(error))")
            }
        }
    }

    /// What PATH is, as far as writing a report goes.
    enum Kind: Equatable {
        /// A regular file or nothing yet, at this path (a symlink's final target).
        case file(String)
        /// A character device or a FIFO.
        case stream
    }

    static func kind(of path: String) throws -> Kind {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return .file(path) }
            throw DigestJob.Failure.delivery("cannot write \(path): \(Errno(rawValue: errno).description)")
        }
        let isLink = info.st_mode & S_IFMT == S_IFLNK
        if isLink, stat(path, &info) != 0 {
            throw DigestJob.Failure.delivery("cannot write \(path): it is a symbolic link to something that does not exist; give the file itself")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            return .file(isLink ? URL(fileURLWithPath: path).resolvingSymlinksInPath().path : path)
        case S_IFCHR, S_IFIFO:
            return .stream
        case S_IFDIR:
            throw DigestJob.Failure.delivery("cannot write \(path): it is a directory; give a file path, such as \(path.hasSuffix("/") ? path : path + "/")digest.md")
        default:
            throw DigestJob.Failure.delivery("cannot write \(path): it is neither a regular file nor a device or pipe to write to")
        }
    }
}
