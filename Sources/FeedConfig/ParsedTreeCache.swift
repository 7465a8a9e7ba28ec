import Crypto
import FeedCore
import FeedFormats
import Foundation
import SystemPackage

/// A large Sources.yml's parsed tree, kept between runs in the user's cache directory
/// (`$XDG_CACHE_HOME/aggregate/parsed-config/`, else `~/.cache/…`), as Python keeps `.pyc` files:
/// reading 500 sources' YAML was a fifth of `aggregate --stored --page 1`, and the same
/// file is read by every command until it is edited. An entry is used only when it was
/// made from the same bytes by the same build of aggregate (a SHA-256 of both: the version,
/// and the executable's size and time), and only the YAML parse is skipped: every check of
/// the configuration still runs on the tree.
/// Small files are parsed as before (the cache would cost what it saves), and an entry that
/// cannot be read or written is a miss, never an error.
struct ParsedTreeCache: Sendable {
    /// Files smaller than this are parsed every time: about 200 sources.
    static let minimumBytes = 16 * 1024

    let directory: URL

    /// Nil when there is no cache directory to use (neither variable set).
    init?(environment: [String: String]) {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            directory = URL(fileURLWithPath: cache).appendingPathComponent("aggregate/parsed-config")
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            directory = URL(fileURLWithPath: home).appendingPathComponent(".cache/aggregate/parsed-config")
        } else {
            return nil
        }
    }

    /// The entry of the file at `path` (its absolute form names the entry, so editing the
    /// file replaces it rather than adding one).
    func entry(for path: String) -> URL {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let digits = Array("0123456789abcdef".utf8)
        let name = SHA256.hash(data: Data(absolute.utf8)).prefix(16).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xf)]] }
        return directory.appendingPathComponent(String(decoding: name, as: UTF8.self) + ".tree")
    }

    /// The tree parsed from `bytes` when it is kept; its locations name `file`.
    func tree(at entry: URL, for bytes: Data, file: String) -> ConfigNode? {
        guard isPrivate, let data = try? Data(contentsOf: entry), data.starts(with: Self.stamp(bytes)) else { return nil }
        return ConfigTreeCoding.decode(data.dropFirst(Self.stampLength), file: file, maxNodes: YAMLDocument.maxValues)
    }

    /// Keeps `tree`, parsed from `bytes`, for the next run. The tree holds whatever the file
    /// does, secrets in headers included, so its directory is the user's alone (0700).
    func keep(_ tree: ConfigNode, at entry: URL, for bytes: Data) {
        var data = Self.stamp(bytes)
        ConfigTreeCoding.encode(tree, into: &data)
        let manager = FileManager.default
        try? manager.createDirectory(at: directory.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? manager.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        guard isPrivate else { return }
        try? data.write(to: entry, options: .atomic)
    }

    /// Whether the directory is one nobody else may read or write (so a tree in it is the
    /// user's own): one made by hand, or by another program, with wider rights is not used.
    private var isPrivate: Bool {
        guard let stat = try? Stat(FilePath(directory.path)) else { return false }
        return stat.type == .directory && stat.permissions.rawValue & 0o077 == 0
    }

    private static let stampLength = 8 + SHA256.byteCount
    /// A format tag, then the hash of the build and the file's bytes.
    private static func stamp(_ bytes: Data) -> Data {
        var hash = SHA256()
        hash.update(data: Data(build.utf8))
        hash.update(data: bytes)
        return Data("AGGTREE1".utf8) + Data(hash.finalize())
    }

    /// This build: a tree made by another (an upgrade, or a development build that parses
    /// differently) is not used.
    private static let build: String = {
        let executable = Bundle.main.executablePath ?? ""
        // swift-system's stat: FileManager's attributes cost a third of a millisecond here.
        guard let stat = try? Stat(FilePath(executable)) else { return "aggregate \(AggregateVersion.current)\n" }
        return "aggregate \(AggregateVersion.current) \(executable) \(stat.size) \(stat.st_mtim.tv_sec).\(stat.st_mtim.tv_nsec)\n"
    }()
}

/// The binary form of a ``ConfigNode`` tree: each node its kind, line and column, then a
/// scalar's kind and text, a list's items or a mapping's entries (key, key place, value).
/// Numbers are LEB128; a file that is cut short or damaged decodes to nil.
enum ConfigTreeCoding {
    static func encode(_ node: ConfigNode, into data: inout Data) {
        var bytes: [UInt8] = []
        write(node, to: &bytes)
        data.append(contentsOf: bytes)
    }

    private static func write(_ node: ConfigNode, to bytes: inout [UInt8]) {
        switch node.value {
        case .scalar(let scalar):
            bytes.append(0)
            place(node.location, to: &bytes)
            bytes.append(kindCode(scalar.kind))
            text(scalar.text, to: &bytes)
        case .list(let items):
            bytes.append(1)
            place(node.location, to: &bytes)
            number(items.count, to: &bytes)
            for item in items { write(item, to: &bytes) }
        case .map(let entries):
            bytes.append(2)
            place(node.location, to: &bytes)
            number(entries.count, to: &bytes)
            for entry in entries {
                text(entry.key, to: &bytes)
                place(entry.keyLocation, to: &bytes)
                write(entry.value, to: &bytes)
            }
        }
    }

    private static func place(_ location: ConfigLocation, to bytes: inout [UInt8]) {
        number(location.line, to: &bytes)
        number(location.column, to: &bytes)
    }

    private static func text(_ text: String, to bytes: inout [UInt8]) {
        number(text.utf8.count, to: &bytes)
        bytes.append(contentsOf: text.utf8)
    }

    private static func number(_ value: Int, to bytes: inout [UInt8]) {
        var rest = UInt(max(value, 0))
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    private static let kinds: [ConfigScalar.Kind] = [.text, .integer, .float, .boolean, .null]
    private static func kindCode(_ kind: ConfigScalar.Kind) -> UInt8 { UInt8(kinds.firstIndex(of: kind) ?? 0) }

    /// The tree in `data`, its locations in `file`; nil unless `data` is exactly one
    /// well-formed tree of at most `maxNodes` nodes.
    static func decode(_ data: Data, file: String, maxNodes: Int) -> ConfigNode? {
        data.withUnsafeBytes { raw -> ConfigNode? in
            var reader = Reader(bytes: raw, file: file, budget: maxNodes)
            guard let node = reader.node(depth: 0), reader.offset == raw.count else { return nil }
            return node
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let file: String
        var budget: Int
        var offset = 0

        init(bytes: UnsafeRawBufferPointer, file: String, budget: Int) {
            self.bytes = bytes
            self.file = file
            self.budget = budget
        }

        /// Deeper than any Sources.yml nests; a damaged file cannot recurse without end.
        static let maxDepth = 64

        mutating func node(depth: Int) -> ConfigNode? {
            budget -= 1
            guard budget >= 0, depth < Self.maxDepth, let tag = byte(), let location = place() else { return nil }
            switch tag {
            case 0:
                guard let code = byte(), Int(code) < kinds.count, let text = text() else { return nil }
                return ConfigNode(.scalar(ConfigScalar(text: text, kind: kinds[Int(code)])), at: location)
            case 1:
                guard let count = number(), count <= budget else { return nil }
                var items: [ConfigNode] = []
                items.reserveCapacity(count)
                for _ in 0..<count {
                    guard let item = node(depth: depth + 1) else { return nil }
                    items.append(item)
                }
                return ConfigNode(.list(items), at: location)
            case 2:
                guard let count = number(), count <= budget else { return nil }
                var entries: [ConfigEntry] = []
                entries.reserveCapacity(count)
                for _ in 0..<count {
                    budget -= 1
                    guard budget >= 0, let key = text(), let keyLocation = place(), let value = node(depth: depth + 1) else { return nil }
                    entries.append(ConfigEntry(key: key, keyLocation: keyLocation, value: value))
                }
                return ConfigNode(.map(entries), at: location)
            default:
                return nil
            }
        }

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func number() -> Int? {
            var value = 0
            var shift = 0
            while let byte = byte() {
                guard shift < 56 else { return nil }
                value |= Int(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }

        mutating func place() -> ConfigLocation? {
            guard let line = number(), let column = number() else { return nil }
            return ConfigLocation(file: file, line: line, column: column)
        }

        mutating func text() -> String? {
            guard let count = number(), count <= bytes.count - offset else { return nil }
            defer { offset += count }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]), as: UTF8.self)
        }
    }
}
