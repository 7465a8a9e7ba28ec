import Foundation
import GRDB
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a backup or a restore did nothing; the files are as they were in every case.
public enum StateBackupFailure: Error, CustomStringConvertible {
    /// The state directory holds no state to back up.
    case nothingToBackUp(directory: String)
    /// A restore would replace a state: it is moved away first by whoever means it.
    case stateExists(directory: String)
    /// The file is not a backup `aggregate backup` wrote (or is cut short).
    case notABackup(path: String, reason: String)
    /// Reading or writing failed (a full disk, a missing file).
    case io(path: String, reason: String)

    public var description: String {
        switch self {
        case .nothingToBackUp(let directory): "\(directory) holds no state to back up"
        case .stateExists(let directory):
            "\(directory) already holds a state; move it away first (or restore into another --state-dir)"
        case .notABackup(let path, let reason): "\(path) is not a backup of aggregate's state (\(reason))"
        case .io(let path, let reason): "\(path): \(reason)"
        }
    }

    /// Whether the fault is in the request (exit 2) rather than the machine.
    public var isUsage: Bool {
        if case .io = self { false } else { true }
    }
}

/// `aggregate backup` and `aggregate restore` for a state directory: each database that
/// must not be lost (``SQLiteStateDirectory/stateFiles``) copied with `VACUUM INTO` — a
/// consistent copy taken while `serve` reads and writes it — into one tar file (POSIX
/// ustar, which `tar -tf` lists), and read back into a directory that holds no state.
/// The HTTP cache is not in it: it is disposable.
extension SQLiteStateDirectory {
    /// Writes the backup of the state in `directory` to `file` (whole beside it, then
    /// renamed over it); returns the names of the databases it holds.
    public static func backUp(_ directory: URL, to file: URL) throws(StateBackupFailure) -> [String] {
        let files = FileManager.default
        let found = Self.stateFiles.filter { files.fileExists(atPath: directory.appendingPathComponent($0).path) }
        guard !found.isEmpty else { throw .nothingToBackUp(directory: directory.path) }
        let work = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).partial")
        let copies = found.map { work.path + "." + $0 }
        defer { for path in copies + [work.path] { try? files.removeItem(atPath: path) } }
        do {
            for (name, copy) in zip(found, copies) {
                let queue = try DatabaseQueue(path: directory.appendingPathComponent(name).path)
                try queue.writeWithoutTransaction { db in try db.execute(sql: "VACUUM INTO ?", arguments: [copy]) }
                try queue.close()
            }
            let archive = try FileDescriptor.open(FilePath(work.path), .writeOnly, options: [.create, .truncate, .closeOnExec],
                                                  permissions: [.ownerReadWrite])
            try archive.closeAfter {
                for (name, copy) in zip(found, copies) { try TarFile.append(name, from: copy, to: archive) }
                try TarFile.finish(archive)
            }
            guard rename(work.path, file.path) == 0 else { throw Errno(rawValue: errno) }
        } catch {
            throw .io(path: file.relativePath, reason: "\(error)")
        }
        return found
    }

    /// Reads the backup `file` into `directory`, which must hold no state; each database
    /// is checked before it is put in place. Returns the names restored.
    public static func restore(from file: URL, into directory: URL) throws(StateBackupFailure) -> [String] {
        let files = FileManager.default
        guard !stateFiles.contains(where: { files.fileExists(atPath: directory.appendingPathComponent($0).path) }) else {
            throw .stateExists(directory: directory.path)
        }
        do {
            _ = try PrivateFiles.directory(directory)
        } catch {
            throw .io(path: directory.path, reason: "\(error)")
        }
        let archive: FileDescriptor
        do {
            archive = try FileDescriptor.open(FilePath(file.path), .readOnly, options: [.closeOnExec])
        } catch {
            throw .io(path: file.relativePath, reason: "\(error)")
        }
        defer { try? archive.close() }
        var restored: [(name: String, partial: String)] = []
        defer { for entry in restored { try? files.removeItem(atPath: entry.partial) } }
        do {
            // Only the names a backup holds, each once: never a path the file chooses.
            while let entry = try TarFile.next(in: archive, path: file.relativePath, allowed: Set(stateFiles).subtracting(restored.map(\.name))) {
                let partial = directory.appendingPathComponent(".\(entry.name).restoring").path
                restored.append((entry.name, partial))
                try TarFile.copy(entry, from: archive, to: partial)
                let queue = try DatabaseQueue(path: partial)
                let check = try queue.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check(1)") } ?? "no answer"
                try queue.close()
                guard check == "ok" else { throw StateBackupFailure.notABackup(path: file.relativePath, reason: "\(entry.name): \(check)") }
            }
            guard !restored.isEmpty else { throw StateBackupFailure.notABackup(path: file.relativePath, reason: "it holds no database") }
            for entry in restored {
                try files.moveItem(atPath: entry.partial, toPath: directory.appendingPathComponent(entry.name).path)
            }
        } catch let failure as StateBackupFailure {
            throw failure
        } catch {
            throw .io(path: file.relativePath, reason: "\(error)")
        }
        let names = restored.map(\.name)
        restored = []
        return names
    }
}

/// The few parts of POSIX ustar a backup needs: regular files, names under 100 bytes,
/// sizes below 8 GiB. A header's checksum is checked when read.
enum TarFile {
    struct Entry {
        var name: String
        var size: Int
    }

    static let block = 512

    /// Writes `name`'s header and the bytes of the file at `path`, padded to a block.
    static func append(_ name: String, from path: String, to archive: FileDescriptor) throws {
        let source = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        try source.closeAfter {
            let size = Int(try source.seek(offset: 0, from: .end))
            _ = try source.seek(offset: 0, from: .start)
            var header = [UInt8](repeating: 0, count: block)
            func put(_ text: String, at offset: Int) { for (index, byte) in text.utf8.enumerated() { header[offset + index] = byte } }
            put(name, at: 0)
            put("0000600", at: 100)
            put("0000000", at: 108)
            put("0000000", at: 116)
            put(String(size, radix: 8).leftPadded(to: 11), at: 124)
            put(String(Int(Date().timeIntervalSince1970), radix: 8).leftPadded(to: 11), at: 136)
            put("        ", at: 148)
            header[156] = UInt8(ascii: "0")
            put("ustar", at: 257)
            put("00", at: 263)
            let sum = header.reduce(0) { $0 + Int($1) }
            put(String(sum, radix: 8).leftPadded(to: 6), at: 148)
            header[154] = 0
            header[155] = UInt8(ascii: " ")
            try archive.writeAll(header)
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            var left = size
            while left > 0 {
                let read = try buffer.withUnsafeMutableBytes { try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<min($0.count, left)])) }
                guard read > 0 else { throw Errno.ioError }
                try archive.writeAll(buffer[..<read])
                left -= read
            }
            try archive.writeAll([UInt8](repeating: 0, count: (block - size % block) % block))
        }
    }

    /// The end of the archive: two empty blocks.
    static func finish(_ archive: FileDescriptor) throws {
        try archive.writeAll([UInt8](repeating: 0, count: 2 * block))
    }

    /// The next entry's header (nil at the end); its name must be one of `allowed`.
    static func next(in archive: FileDescriptor, path: String, allowed: Set<String>) throws -> Entry? {
        var header = [UInt8](repeating: 0, count: block)
        guard try readFully(archive, into: &header[...]) else {
            throw StateBackupFailure.notABackup(path: path, reason: "it ends inside a header")
        }
        if header.allSatisfy({ $0 == 0 }) { return nil }
        func field(_ offset: Int, _ length: Int) -> String {
            String(decoding: header[offset..<(offset + length)].prefix { $0 != 0 }, as: UTF8.self)
        }
        var summed = header
        for index in 148..<156 { summed[index] = UInt8(ascii: " ") }
        let stated = Int(field(148, 8).trimmingCharacters(in: .whitespaces), radix: 8)
        guard field(257, 5) == "ustar", stated == summed.reduce(0, { $0 + Int($1) }) else {
            throw StateBackupFailure.notABackup(path: path, reason: "no tar header where one should be")
        }
        let name = field(0, 100)
        guard header[156] == UInt8(ascii: "0") || header[156] == 0, allowed.contains(name),
              let size = Int(field(124, 12).trimmingCharacters(in: .whitespaces), radix: 8) else {
            throw StateBackupFailure.notABackup(path: path, reason: "it holds \"\(name.prefix(100))\", which no backup holds")
        }
        return Entry(name: name, size: size)
    }

    /// Copies `entry`'s bytes to a new file at `path` (0600) and skips its padding.
    static func copy(_ entry: Entry, from archive: FileDescriptor, to path: String) throws {
        let target = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .truncate, .closeOnExec],
                                             permissions: [.ownerReadWrite])
        try target.closeAfter {
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            var left = entry.size
            while left > 0 {
                let count = min(buffer.count, left)
                guard try readFully(archive, into: &buffer[..<count]) else { throw StateBackupFailure.notABackup(path: path, reason: "it is cut short") }
                try target.writeAll(buffer[..<count])
                left -= count
            }
        }
        var padding = [UInt8](repeating: 0, count: (block - entry.size % block) % block)
        _ = try readFully(archive, into: &padding[...])
    }

    /// Fills `bytes` from `archive`; false when the file ends first.
    static func readFully(_ archive: FileDescriptor, into bytes: inout ArraySlice<UInt8>) throws -> Bool {
        var filled = bytes.startIndex
        while filled < bytes.endIndex {
            let read = try bytes[filled...].withUnsafeMutableBytes { try archive.read(into: $0) }
            if read == 0 { return false }
            filled += read
        }
        return true
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
