import FeedCore
import FeedState
import FeedSupport
import Foundation
import SystemPackage

/// A body that could not be stored as a file, with the folder to look at.
struct BodyFileFailure: Error, CustomStringConvertible {
    let folder: String
    let reason: String

    var description: String { "cannot store a large body in \(folder): \(reason)" }
}

/// Response bodies and remembered pages of 1 MiB and more, kept as files in `bodies/`
/// beside `cache.sqlite`.
///
/// SQLite writes a blob twice (its write-ahead log, then the database at the checkpoint):
/// a 20 MB body took longer to store than to decode. A file is written once. Each file is
/// written whole under a temporary name and renamed, and never changed after, so a reader
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

    /// `bodies/` beside `cache.sqlite`.
    init(in directory: SQLiteStateDirectory) {
        folder = directory.cacheDirectory.appendingPathComponent("bodies")
    }

    /// Writes `body` to a new file (0600, in a 0700 folder made if missing) and returns
    /// its name, `<uuid>-<length>`.
    func write(_ body: Data) throws(BodyFileFailure) -> String {
        let name = "\(UUID().uuidString.lowercased())-\(body.count)"
        let temporary = folder.appendingPathComponent(".\(name).partial")
        do {
            try PrivateFiles.directory(folder)
            let file = try FileDescriptor.open(FilePath(temporary.path), .writeOnly,
                                               options: [.create, .exclusiveCreate, .closeOnExec],
                                               permissions: [.ownerReadWrite])
            do {
                _ = try file.closeAfter { try file.writeAll(body) }
            } catch {
                try? FileManager.default.removeItem(at: temporary)
                throw error
            }
            try FileManager.default.moveItem(at: temporary, to: folder.appendingPathComponent(name))
            return name
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw BodyFileFailure(folder: folder.path, reason: PlainWords.describe(error))
        }
    }

    /// The body in file `name`, mapped rather than read (Foundation maps it read-only;
    /// the file never changes once named); nil when it is missing, cut short, or the
    /// name is not one this type gives.
    func read(_ name: String) -> Data? {
        guard let expected = Self.length(name), expected > 0,
              let data = try? Data(contentsOf: folder.appendingPathComponent(name), options: .alwaysMapped),
              data.count == expected else { return nil }
        return data
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
