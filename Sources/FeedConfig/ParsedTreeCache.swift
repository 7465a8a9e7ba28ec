import Crypto
import FeedCore
import FeedSupport
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
        return directory.appendingPathComponent(Hex.lowercase(SHA256.hash(data: Data(absolute.utf8)).prefix(16)) + ".tree")
    }

    /// The tree parsed from `bytes` when it is kept; its locations name `file`.
    func tree(at entry: URL, for bytes: Data, file: String) -> ConfigNode? {
        guard isPrivate, let data = try? Data(contentsOf: entry), data.starts(with: Self.stamp(bytes)) else { return nil }
        return ConfigTreeCoding.decode(data.dropFirst(Self.stampLength), file: file, maxNodes: YAMLDocument.maxValues)
    }

    /// Keeps `tree`, parsed from `bytes`, for the next run. The tree holds whatever the file
    /// does, secrets in headers included, so its directory is the user's alone (0700); so is
    /// `aggregate/` above it when made here, which is also the default state directory (made
    /// 0755, every later run would warn that others can read the state).
    func keep(_ tree: ConfigNode, at entry: URL, for bytes: Data) {
        var data = Self.stamp(bytes)
        ConfigTreeCoding.encode(tree, into: &data)
        let manager = FileManager.default
        let home = directory.deletingLastPathComponent()
        try? manager.createDirectory(at: home.deletingLastPathComponent(), withIntermediateDirectories: true)
        for folder in [home, directory] {
            try? manager.createDirectory(at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        guard isPrivate else { return }
        try? data.write(to: entry, options: .atomic)
        removeEntries(writtenBefore: Date().addingTimeInterval(-Self.unusedFor), keeping: entry)
    }

    /// Entries not written for this long go when another is written. There is one a
    /// Sources.yml path, and paths come and go (a project's folder, a script's temporary
    /// one); a file used that long without an edit is parsed once more and kept again.
    static let unusedFor: TimeInterval = 30 * 86_400

    private func removeEntries(writtenBefore cutoff: Date, keeping entry: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where name.hasSuffix(".tree") && name != entry.lastPathComponent {
            let path = FilePath(directory.appendingPathComponent(name).path)
            guard let stat = try? Stat(path, followTargetSymlink: false), stat.type == .regular,
                  Double(stat.st_mtim.tv_sec) < cutoff.timeIntervalSince1970 else { continue }
            try? FileManager.default.removeItem(atPath: path.string)
        }
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
        // This build only: a tree made by another (an upgrade, or a development build
        // that parses differently) is not used.
        hash.update(data: Data(BuildIdentity.current.utf8))
        hash.update(data: bytes)
        return Data("AGGTREE1".utf8) + Data(hash.finalize())
    }
}
