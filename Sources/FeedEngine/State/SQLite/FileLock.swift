import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive lock between processes: `flock` on a file. The kernel drops it when the
/// process ends, even by `kill -9`, so it never goes stale. Released on deinit.
public final class FileLock {
    private let descriptor: Int32

    /// Another process held the lock for the whole wait.
    public struct Busy: Error {}

    /// The lock file could not be opened; says why in plain words.
    public struct Unavailable: Error, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "cannot use the lock file \(path): \(reason)" }
    }

    /// Waits up to `wait` seconds for the lock on `path` (created if missing).
    public init(path: String, wait: Double) throws {
        descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            let reason = code == EISDIR ? "it is a directory; remove it or choose another --state-dir"
                : String(cString: strerror(code))
            throw Unavailable(path: path, reason: reason)
        }
        let deadline = Date().addingTimeInterval(wait)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard Date() < deadline else {
                close(descriptor)
                throw Busy()
            }
            usleep(20_000)
        }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
