import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a digest goes. Stdout is at-least-once: a run killed after printing and before
/// its commit prints those changes again. A file is exactly-once: the rendered text is
/// committed with the state, then written (temporary file + rename), then marked done;
/// a run killed in between leaves it to the next run, which finishes it first and
/// writes it only if the file does not already hold it.
public enum DigestOutput: Sendable {
    case stdout
    case file(String)

    /// Writes `text` to `path` whole: a reader sees the old file or the new one.
    static func writeFile(_ text: String, to path: String) throws {
        try publish(try prepare(text, for: path), to: path)
    }

    /// Step one: the text in a temporary file beside `path`, so a directory that cannot
    /// be written fails the run before anything is committed.
    static func prepare(_ text: String, for path: String) throws -> URL {
        let target = URL(fileURLWithPath: path)
        let temporary = target.deletingLastPathComponent()
            .appendingPathComponent(".\(target.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp")
        do {
            try Data(text.utf8).write(to: temporary)
            return temporary
        } catch {
            throw DigestJob.Failure.delivery("cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// Step two: the temporary file renamed into place.
    static func publish(_ temporary: URL, to path: String) throws {
        // rename(2) replaces the target atomically: a reader sees the old file or the new.
        guard rename(temporary.path, path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw DigestJob.Failure.delivery("cannot write \(path): \(reason)")
        }
    }
}
