import FeedCore
import FeedState
import Foundation
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive lock between processes: `flock` on a file. The kernel drops it when the
/// process ends, even by `kill -9`, so it never goes stale. Released on deinit.
public final class FileLock {
    private let descriptor: FileDescriptor

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
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readWrite, options: [.create, .closeOnExec],
                                                 permissions: [.ownerReadWrite])
        } catch Errno.isDirectory {
            throw Unavailable(path: path, reason: "it is a directory; remove it or choose another --state-dir")
        } catch {
            throw Unavailable(path: path, reason: PlainWords.describe(error))
        }
        let deadline = Date().addingTimeInterval(wait)
        // swift-system has no flock; the call is the one piece of the C library here.
        while flock(descriptor.rawValue, LOCK_EX | LOCK_NB) != 0 {
            guard Date() < deadline else {
                try? descriptor.close()
                throw Busy()
            }
            usleep(20_000)
        }
    }

    deinit {
        try? descriptor.close()
    }
}
