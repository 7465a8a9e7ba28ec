import FeedCore
import FeedState
import FeedSupport
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

    /// Waits up to `wait` seconds for the lock on `path` (created if missing), polling
    /// every 20 ms with `Task.sleep`: what a digest run waits for, in async code.
    public static func acquire(path: String, wait: Double) async throws -> FileLock {
        let lock = try FileLock(opening: path)
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(wait * 1000)))
        while !lock.tryLock() {
            guard ContinuousClock.now < deadline else { throw Busy() }
            try await Task.sleep(for: .milliseconds(20))
        }
        return lock
    }

    /// Waits up to `wait` seconds for the lock on `path`, blocking the calling thread: for
    /// synchronous code (opening a database file), where the lock is held for milliseconds.
    public convenience init(path: String, wait: Double) throws {
        try self.init(opening: path)
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(wait * 1000)))
        while !tryLock() {
            guard ContinuousClock.now < deadline else { throw Busy() }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    private init(opening path: String) throws {
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readWrite, options: [.create, .closeOnExec],
                                                 permissions: [.ownerReadWrite])
        } catch Errno.isDirectory {
            throw Unavailable(path: path, reason: "it is a directory; remove it or choose another --state-dir")
        } catch {
            throw Unavailable(path: path, reason: PlainWords.describe(error))
        }
    }

    /// Takes the lock if no other process holds it. (swift-system has no flock; the call
    /// is the one piece of the C library here.)
    private func tryLock() -> Bool {
        flock(descriptor.rawValue, LOCK_EX | LOCK_NB) == 0
    }

    deinit {
        try? descriptor.close()
    }
}
