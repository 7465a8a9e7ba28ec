import FeedCore
import Foundation

/// A body that could not be stored as a file, with the folder to look at.
struct BodyFileFailure: Error, CustomStringConvertible {
    let folder: String
    let reason: String

    var description: String { "cannot store a large body in \(folder): \(reason)" }
}

/// Response bodies and mapped pages (PageMemo) of 1 MiB and more, kept as files in
/// `bodies/` beside `cache.sqlite`.
///
/// SQLite writes a blob twice (its write-ahead log, then the database at the checkpoint):
/// a 20 MB body took longer to store than to decode. A file is written once. Each file is
/// created whole under a temporary name and renamed, and never changed after, so a reader
/// that maps it stays safe while another process replaces the row that names it. The
/// name ends in the body's length, which a read checks: a file cut short by a crash is a
/// cache miss, not a wrong body.
struct BodyFiles: Sendable {
    /// Smaller bodies stay in the database, where one row is one read.
    static let threshold = 1 << 20
    /// Files no row names are removed once this old (a writer names its file in a row
    /// within milliseconds of creating it).
    static let orphanAge: TimeInterval = 600

    let folder: URL

    /// Writes `body` to a new file and returns its name.
    func write(_ body: Data) throws(BodyFileFailure) -> String {
        do {
            let file = try SpooledBody(folder: folder)
            guard body.withUnsafeBytes({ file.append($0) }) else { throw file.writeError ?? POSIXError(.EIO) }
            guard let name = file.close() else { throw CocoaError(.fileWriteUnknown) }
            file.handOver()
            return name
        } catch {
            throw BodyFileFailure(folder: folder.path, reason: PlainWords.describe(error))
        }
    }

    /// Where a page written a chunk at a time went.
    enum PageBytes {
        /// Under ``threshold``, or no file could take it: the row keeps it.
        case inline(Data)
        /// A new file, named.
        case file(String)
    }

    /// Writes `page` as its chunks come: in memory up to ``threshold``, then on into a new
    /// file, so a large page is never whole in memory. Where no file can be made or the
    /// file cannot take it all (a full disk), the page is kept in memory as before.
    func write(_ page: MappedPageBytes) -> PageBytes {
        var head = Data()
        var file: SpooledBody?
        var fileFailed = false
        page.write { chunk in
            if let spooled = file {
                if !fileFailed && !spooled.append(chunk) { fileFailed = true }
                return
            }
            head.append(contentsOf: chunk)
            guard head.count >= Self.threshold, !fileFailed else { return }
            if let spooled = try? SpooledBody(folder: folder), head.withUnsafeBytes({ spooled.append($0) }) {
                file = spooled
                head = Data()
            } else {
                fileFailed = true
            }
        }
        guard let file else { return .inline(head) }
        // Unnamed, the partial file is removed with `file`.
        guard !fileFailed, let name = file.close() else { return .inline(page.gathered()) }
        file.handOver()
        return .file(name)
    }

    /// The body in file `name`, mapped rather than read; nil when it is missing, cut
    /// short, or the name is not one this type gives.
    func read(_ name: String) -> Data? {
        guard let expected = Self.length(name), expected > 0 else { return nil }
        return Self.map(folder.appendingPathComponent(name).path, length: expected)
    }

    /// A private, read-only mapping of the file at `path`, registered with
    /// ``MappedBodies`` so that a decode can give back the pages it has read (the file
    /// never changes once named, so they can always be read again).
    private static func map(_ path: String, length: Int) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { _ = close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, Int(status.st_size) == length,
              let address = mmap(nil, length, PROT_READ, MAP_PRIVATE, descriptor, 0), address != MAP_FAILED else { return nil }
        MappedBodies.register(UnsafeRawBufferPointer(start: address, count: length))
        return Data(bytesNoCopy: address, count: length, deallocator: .custom { address, length in
            // Unregistered first: once unmapped, the addresses may be reused by memory
            // whose pages must never be dropped.
            MappedBodies.unregister(UnsafeRawBufferPointer(start: address, count: length))
            munmap(address, length)
        })
    }

    func remove(_ name: String?) {
        guard let name, Self.length(name) != nil else { return }
        try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
    }

    /// Removes old files that no row names (left by a process killed between writing a
    /// file and naming it, or by a damaged cache moved aside).
    func sweep(keeping named: Set<String>, now: Date = Date()) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        for name in names where !named.contains(name) {
            let url = folder.appendingPathComponent(name)
            let modified = (try? url.resourceValues(forKeys: [.contentModificationDateKey]))?.contentModificationDate ?? now
            if now.timeIntervalSince(modified) > Self.orphanAge { try? FileManager.default.removeItem(at: url) }
        }
    }

    /// The length a file name promises: `<uuid>-<bytes>`, lower-case hex and dashes only.
    private static func length(_ name: String) -> Int? {
        guard name.utf8.count <= 64, name.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || $0 == 0x2D }),
              let dash = name.lastIndex(of: "-") else { return nil }
        return Int(name[name.index(after: dash)...])
    }
}
