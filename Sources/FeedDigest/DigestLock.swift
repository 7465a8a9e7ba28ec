import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One run of a digest at a time: an exclusive `flock` on a file per digest name. The
/// kernel drops the lock when the process ends, even by `kill -9`, so it never goes stale.
final class DigestLock {
    private let descriptor: Int32

    struct Busy: Error {}

    /// Waits up to `wait` seconds for the lock; throws ``Busy`` after that.
    init(directory: URL, name: String, wait: Double) throws {
        let path = directory.appendingPathComponent("digest-\(name).lock").path
        descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        let deadline = Date().addingTimeInterval(wait)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard Date() < deadline else {
                close(descriptor)
                throw Busy()
            }
            usleep(50_000)
        }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
