import FeedCore
import FeedSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Sources.yml on disk that commands add sources to and remove them from (`import`,
/// `add`, the Google Reader API's subscribe and unsubscribe): the entries go
/// through ``SourcesFileEdit`` (the one writer of text into the file), the result must
/// load as the file did, and it replaces the file whole, so a reader sees the old file or
/// the new one, never half of one.
public struct SourcesFile: Sendable {
    /// Why nothing was written; the file is as it was in every case.
    public enum Failure: Error, CustomStringConvertible {
        /// The file could not be read, or is not UTF-8.
        case unreadable(path: String)
        /// The entries have no place in the file as it is written (a flow-style list).
        case unplaceable(path: String, reason: String)
        /// The file with the entries would not load (every problem, with lines).
        case wouldNotLoad(path: String, problems: String)
        /// Writing or renaming failed (a full disk, a read-only folder).
        case unwritable(path: String, reason: String)

        public var description: String {
            switch self {
            case .unreadable(let path): "cannot read \(path)"
            case .unplaceable(let path, let reason): "cannot change \(path): \(reason); it was left as it was"
            case .wouldNotLoad(let path, let problems): "the changed file would not load, so \(path) was left as it was:\n\(problems)"
            case .unwritable(let path, let reason): "cannot write \(path): \(reason); it was left as it was"
            }
        }

        /// Whether the fault is in the file or the request (exit 2) rather than the machine.
        public var isUsage: Bool {
            if case .unwritable = self { false } else { true }
        }
    }

    /// The file's path as found (`--config`, `AGGREGATE_CONFIG`, or the usual places).
    public let path: String
    /// The file as loaded now: what the new entries are checked against.
    public let config: FeedConfig
    public let loader: ConfigLoader
    /// The text a file not made yet starts from: it is written with the first change.
    public let template: String?

    public init(path: String, config: FeedConfig, loader: ConfigLoader) {
        self.path = path
        self.config = config
        self.loader = loader
        template = nil
    }

    /// A Sources.yml to make at `path` with the first entries added to it: a feed list
    /// started from nothing (`aggregate add`, `aggregate import`).
    public init(making path: String, loader: ConfigLoader) throws(Failure) {
        let text = Self.newFileText
        do {
            config = try loader.load(text: text, file: ConfigLoader.displayName(path), directory: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        } catch {
            throw .wouldNotLoad(path: path, problems: error.description)
        }
        self.path = path
        self.loader = loader
        template = text
    }

    /// What a Sources.yml made by `add` or `import` starts with.
    public static let newFileText = """
        # Sources for `aggregate`: the feeds it reads (docs/sources-yml.md).
        # `aggregate add URL`, `aggregate import FILE.opml` and `aggregate remove ID` change this list.
        defaults:
          refresh: 1h   # how often `serve` fetches each feed (a source may say its own refresh:)
        sources:

        """

    /// The file with `entries` at the end of its `sources:` list, checked, not written.
    public func text(adding entries: [NewSourceEntry]) throws(Failure) -> String {
        let text = try current()
        let updated: String
        do {
            // Read back before it is written: the old document plus exactly these entries.
            updated = try SourcesFileEdit.adding(entries, to: text, file: config.file)
        } catch {
            throw .unplaceable(path: path, reason: error.description)
        }
        return try loading(updated)
    }

    /// The file with the source `id` replaced by `entry` in its place, or removed (nil),
    /// checked, not written (``SourcesFileEdit/replacing(_:with:in:file:)``).
    /// With `onlyWritten`, an entry with settings beside those this writer writes is not
    /// removed either (a hand-written entry with headers, an `exec` entry).
    public func text(changing id: String, to entry: NewSourceEntry?, onlyWritten: Bool = false) throws(Failure) -> String {
        let text = try current()
        let updated: String
        do {
            updated = try SourcesFileEdit.replacing(id, with: entry, in: text, file: config.file, onlyWritten: onlyWritten || entry != nil)
        } catch {
            throw .unplaceable(path: path, reason: error.description)
        }
        return try loading(updated)
    }

    /// Adds `entries` to the file: written whole beside it (beside a link's target, when
    /// it is one) and renamed over it, keeping its permissions.
    public func add(_ entries: [NewSourceEntry]) throws(Failure) {
        try replace(with: text(adding: entries))
    }

    /// Replaces the source `id` by `entry`, or removes it (nil), as ``add(_:)`` writes.
    public func change(_ id: String, to entry: NewSourceEntry?, onlyWritten: Bool = false) throws(Failure) {
        try replace(with: text(changing: id, to: entry, onlyWritten: onlyWritten))
    }

    /// The file as it is on disk now.
    func current() throws(Failure) -> String {
        if let template, !FileManager.default.fileExists(atPath: path) { return template }
        guard let text = FileManager.default.contents(atPath: path).flatMap({ String(data: $0, encoding: .utf8) }) else {
            throw .unreadable(path: path)
        }
        return text
    }

    /// `updated`, when it loads as the old file did: nothing is written otherwise.
    func loading(_ updated: String) throws(Failure) -> String {
        do {
            _ = try loader.load(text: updated, file: config.file, directory: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        } catch {
            throw .wouldNotLoad(path: path, problems: error.description)
        }
        return updated
    }

    /// Writes `updated` whole beside the file and renames it over it.
    func replace(with updated: String) throws(Failure) {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let temporary = target + ".add-\(ProcessInfo.processInfo.processIdentifier).tmp"
        do {
            if template != nil {
                try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: target).deletingLastPathComponent().path,
                                                        withIntermediateDirectories: true)
            }
            try Data(updated.utf8).write(to: URL(fileURLWithPath: temporary))
            // A file made here gets the usual mode; an existing one keeps its own.
            let mode = (try? FileManager.default.attributesOfItem(atPath: target))?[.posixPermissions] ?? 0o644
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: temporary)
            guard rename(temporary, target) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw .unwritable(path: path, reason: PlainWords.describe(error))
        }
    }

    /// The entries' YAML as the file would get it (`--dry-run`).
    public func yaml(for entries: [NewSourceEntry]) -> String {
        let text = FileManager.default.contents(atPath: path).flatMap { String(data: $0, encoding: .utf8) } ?? ""
        return SourcesFileEdit.yaml(for: entries, indent: SourcesFileEdit.entryIndent(in: text))
    }

    /// A URL as compared for "already configured": scheme and host in lower case, no
    /// trailing slash.
    public static func key(_ url: URL) -> String {
        var text = url.absoluteString
        if let scheme = url.scheme, let host = url.host, let range = text.range(of: "\(scheme)://\(host)", options: .caseInsensitive) {
            text.replaceSubrange(range, with: "\(scheme.lowercased())://\(host.lowercased())")
        }
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// The id of the source already configured with `url`, if any.
    public func configuredID(for url: URL) -> String? {
        Self.configuredID(for: url, in: config)
    }

    /// The id of the source of `config` configured with `url`, if any.
    public static func configuredID(for url: URL, in config: FeedConfig) -> String? {
        let key = key(url)
        return config.sources.first { Self.key($0.url) == key }?.id
    }
}
