import Foundation
import Synchronization

/// Where a large body is written as it arrives, straight into the cache's `bodies/`
/// folder: the source then reads the file mapped, and the cache names the same file
/// instead of writing a second copy. On this machine kind a 20 MB body cost as much to
/// hold in memory as to write out; now it is only written (README, "Performance").
///
/// The caching layer makes one spool per request and lends it to the network through
/// ``current`` (a task local, so the transports in between need not know of it); the
/// network uses it for bodies of ``BodyFiles/threshold`` and more. A file is created
/// under a temporary name and renamed once whole, like every body file; one the cache
/// never claims is removed (an attempt that was retried, an error page), and a process
/// killed meanwhile leaves an orphan the cache's sweep removes.
public final class BodySpool: Sendable {
    /// The spool of the request being sent, if its cache keeps files.
    @TaskLocal static var current: BodySpool?

    let files: BodyFiles
    /// Finished files by where their mapping starts and its length, until claimed.
    private let finished = Mutex<[(address: UInt, count: Int, name: String)]>([])

    init(files: BodyFiles) {
        self.files = files
    }

    /// A new file to write a body into.
    func begin() throws -> SpooledBody {
        try SpooledBody(folder: files.folder)
    }

    /// Renames a whole body to its final name and maps it; nil if that fails (the caller
    /// then reads the bytes back with ``SpooledBody/readBack()``).
    func finish(_ body: SpooledBody) -> Data? {
        guard let name = body.close(), let mapped = files.read(name) else { return nil }
        let address = mapped.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        finished.withLock { $0.append((address, mapped.count, name)) }
        body.handOver()
        return mapped
    }

    /// The file `body` was received into, as a body already written for the cache; nil
    /// when `body` is not one of this spool's mappings, whole (a layer in between made new
    /// bytes, or kept only some).
    func claim(_ body: Data) -> PreparedBody? {
        let address = body.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let name = finished.withLock { list -> String? in
            guard let index = list.firstIndex(where: { $0.address == address && $0.count == body.count }) else { return nil }
            return list.remove(at: index).name
        }
        return name.map { name in PreparedBody(written: Task { name }) }
    }

    /// Removes the files nobody claimed.
    func removeUnclaimed() {
        let names = finished.withLock { list in
            defer { list = [] }
            return list.map(\.name)
        }
        for name in names { files.remove(name) }
    }
}

/// One body file being written (the only place that names them): chunks appended as
/// they arrive, then renamed whole to `<uuid>-<length>`. Unless
/// handed over to its spool, it removes its file when dropped (a failed or cancelled
/// transfer, or a body read back into memory).
final class SpooledBody {
    private var descriptor: Int32?
    private let folder: URL
    private let name = UUID().uuidString.lowercased()
    /// The file's name now: temporary until ``close()`` renames it; nil once handed over.
    private var current: String?
    private(set) var count = 0
    /// Why the last ``append(_:)`` failed.
    private(set) var writeError: POSIXError?

    /// Creates the file (and its private folder if missing).
    init(folder: URL) throws {
        try PrivateFiles.directory(folder)
        self.folder = folder
        let temporary = ".\(name).partial"
        let path = folder.appendingPathComponent(temporary).path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        self.descriptor = descriptor
        self.current = temporary
    }

    deinit {
        if let descriptor { _ = Glibc.close(descriptor) }
        if let current { try? FileManager.default.removeItem(at: folder.appendingPathComponent(current)) }
    }

    /// Appends `bytes`; false when the file cannot take them (a full disk).
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let descriptor else { return false }
        var offset = 0
        while offset < bytes.count, let base = bytes.baseAddress {
            let written = write(descriptor, base + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                writeError = POSIXError(POSIXErrorCode(rawValue: written < 0 ? errno : ENOSPC) ?? .EIO)
                return false
            }
            offset += written
        }
        count += bytes.count
        return true
    }

    /// The bytes of every whole ``append(_:)`` so far, read back (to carry on in memory
    /// when the spool fails). A write the disk cut short left part of its chunk in the
    /// file, and the caller keeps that chunk whole: reading the file to its end doubled
    /// those bytes and made the body unreadable.
    func readBack() -> Data? {
        guard let current, let handle = FileHandle(forReadingAtPath: folder.appendingPathComponent(current).path) else { return nil }
        defer { try? handle.close() }
        guard count > 0 else { return Data() }
        guard let bytes = try? handle.read(upToCount: count), bytes.count == count else { return nil }
        return bytes
    }

    /// Closes the file and gives it its final name, `<uuid>-<length>`; nil on failure.
    func close() -> String? {
        guard let descriptor else { return nil }
        self.descriptor = nil
        let final = "\(name)-\(count)"
        guard Glibc.close(descriptor) == 0, let temporary = current,
              (try? FileManager.default.moveItem(at: folder.appendingPathComponent(temporary),
                                                 to: folder.appendingPathComponent(final))) != nil else { return nil }
        current = final
        return final
    }

    /// The spool owns the file from now on.
    func handOver() {
        current = nil
    }
}
