@testable import FeedConfig
import FeedCore
import Foundation
import Testing

/// A large Sources.yml's parsed tree is kept between runs, used only for the same bytes,
/// and never changes what a configuration says or where its problems are.
@Suite struct ParsedTreeCacheTests {
    /// A temporary directory holding a Sources.yml of `count` sources and a cache home.
    struct Place {
        let directory: URL
        var sourcesYml: URL { directory.appendingPathComponent("Sources.yml") }
        var cacheHome: URL { directory.appendingPathComponent("cache") }
        var entries: [String] {
            (try? FileManager.default.contentsOfDirectory(atPath: cacheHome.appendingPathComponent("aggregate/parsed-config").path)) ?? []
        }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("parsed-tree-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }

        func loader(_ extra: [String: String] = [:]) -> ConfigLoader {
            ConfigLoader(registry: SourceRegistry([MemorySource.self]),
                         environment: ["HOME": directory.path, "XDG_CACHE_HOME": cacheHome.path].merging(extra) { _, new in new })
        }

        func write(_ text: String) throws { try Data(text.utf8).write(to: sourcesYml) }
    }

    /// `count` sources, the last one disabled with an unset variable in its URL (a warning
    /// with a place), and one `yes` (a boolean) and one `10` (a number) per source.
    static func sourcesYml(count: Int, firstID: String = "shop-0") -> String {
        var text = "sources:\n"
        for index in 0..<count {
            text += "  - id: \(index == 0 ? firstID : "shop-\(index)")\n    plugin: memory\n    url: https://memory.test/shop/\(index)\n"
            text += "    enabled: \(index == count - 1 ? "no" : "yes")\n    timeout: 10\n"
        }
        return text.replacingOccurrences(of: "memory.test/shop/\(count - 1)", with: "memory.test/${UNSET_TOKEN}")
    }

    @Test func aLargeFileIsKeptAndTheKeptTreeGivesTheSameConfiguration() throws {
        let place = try Place()
        defer { try? FileManager.default.removeItem(at: place.directory) }
        let text = Self.sourcesYml(count: 300)
        #expect(text.utf8.count >= ParsedTreeCache.minimumBytes)
        try place.write(text)
        let parsed = try place.loader().load(path: place.sourcesYml.path)
        #expect(place.entries.count == 1)
        // Secrets in the file are in its tree too: the directory is the user's alone.
        let folder = place.cacheHome.appendingPathComponent("aggregate/parsed-config").path
        #expect(try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int == 0o700)
        // So is `aggregate/`, the default state directory, which the state warns about otherwise.
        let stateHome = place.cacheHome.appendingPathComponent("aggregate").path
        #expect(try FileManager.default.attributesOfItem(atPath: stateHome)[.posixPermissions] as? Int == 0o700)
        let kept = try place.loader().load(path: place.sourcesYml.path)
        #expect(kept.sources.map(\.id) == parsed.sources.map(\.id))
        #expect(kept.sources.map(\.url) == parsed.sources.map(\.url))
        #expect(kept.sources.map(\.enabled) == parsed.sources.map(\.enabled))
        #expect(kept.sources.map(\.location) == parsed.sources.map(\.location))
        #expect(kept.sources.count == 300)
        // The warning keeps its exact place: line 1,499, where the URL of the 300th source is.
        #expect(kept.warnings.map(\.description) == parsed.warnings.map(\.description))
        #expect(kept.warnings.map(\.location.description) == ["\(place.sourcesYml.path):1499:10"])
    }

    /// One entry a path, so entries of paths gone (a script's temporary folder) would pile
    /// up: writing one removes those not written for 30 days, and nothing else.
    @Test func writingAnEntryRemovesThoseUnwrittenForThirtyDays() throws {
        let place = try Place()
        defer { try? FileManager.default.removeItem(at: place.directory) }
        try place.write(Self.sourcesYml(count: 300))
        _ = try place.loader().load(path: place.sourcesYml.path)
        let folder = place.cacheHome.appendingPathComponent("aggregate/parsed-config")
        let kept = try #require(place.entries.first)
        let days: [String: Double] = [kept: 40, "0123456789abcdef0123456789abcdef.tree": 31, "fedcba9876543210fedcba9876543210.tree": 29,
                                      "notes.txt": 90]
        for (name, age) in days {
            let file = folder.appendingPathComponent(name)
            if !FileManager.default.fileExists(atPath: file.path) { try Data("x".utf8).write(to: file) }
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-age * 86_400)], ofItemAtPath: file.path)
        }
        // Reading writes nothing, so removes nothing.
        _ = try place.loader().load(path: place.sourcesYml.path)
        #expect(Set(place.entries) == Set(days.keys))
        // Another Sources.yml's entry is written: the two old entries go, its own among them.
        let other = place.directory.appendingPathComponent("Other.yml")
        try Data(Self.sourcesYml(count: 300, firstID: "other").utf8).write(to: other)
        _ = try place.loader().load(path: other.path)
        let otherEntry = try #require(ParsedTreeCache(environment: ["XDG_CACHE_HOME": place.cacheHome.path])?.entry(for: other.path))
        #expect(Set(place.entries) == ["fedcba9876543210fedcba9876543210.tree", "notes.txt", otherEntry.lastPathComponent])
    }

    /// The kept tree is read (a tree planted for the same bytes is what loads), and an
    /// edit of one byte is never answered from it.
    @Test func theKeptTreeIsUsedForTheSameBytesOnly() throws {
        let place = try Place()
        defer { try? FileManager.default.removeItem(at: place.directory) }
        let text = Self.sourcesYml(count: 300)
        try place.write(text)
        let planted = try #require(try YAMLDocument.parse(Self.sourcesYml(count: 300, firstID: "planted"), file: "x"))
        let cache = try #require(ParsedTreeCache(environment: ["XDG_CACHE_HOME": place.cacheHome.path]))
        cache.keep(planted, at: cache.entry(for: place.sourcesYml.path), for: Data(text.utf8))
        #expect(try place.loader().load(path: place.sourcesYml.path).sources.first?.id == "planted")

        try place.write(Self.sourcesYml(count: 300, firstID: "edited"))
        #expect(try place.loader().load(path: place.sourcesYml.path).sources.first?.id == "edited")
        try place.write(text)
        // The edit's tree replaced the planted one: one entry a file.
        #expect(try place.loader().load(path: place.sourcesYml.path).sources.first?.id == "shop-0")
        #expect(place.entries.count == 1)
    }

    /// Only the parse is skipped: a kept tree is checked again, in this run's environment.
    @Test func aKeptTreeIsStillChecked() throws {
        let place = try Place()
        defer { try? FileManager.default.removeItem(at: place.directory) }
        try place.write(Self.sourcesYml(count: 300).replacingOccurrences(of: "memory.test/shop/0\n", with: "memory.test/${TOKEN}\n"))
        #expect(try place.loader(["TOKEN": "a"]).load(path: place.sourcesYml.path).sources.first?.url.absoluteString == "https://memory.test/a")
        #expect(place.entries.count == 1)
        let error = #expect(throws: ConfigLoadError.self) { try place.loader().load(path: place.sourcesYml.path) }
        #expect(error?.description.hasPrefix("\(place.sourcesYml.path):4:10: sources[0].url: environment variable TOKEN is not set") == true)
    }

    @Test func aDamagedEntryIsParsedAgainAndReplaced() throws {
        let place = try Place()
        defer { try? FileManager.default.removeItem(at: place.directory) }
        try place.write(Self.sourcesYml(count: 300))
        _ = try place.loader().load(path: place.sourcesYml.path)
        let entry = place.cacheHome.appendingPathComponent("aggregate/parsed-config/\(try #require(place.entries.first))")
        let good = try Data(contentsOf: entry)
        try good.prefix(good.count / 2).write(to: entry)
        let config = try place.loader().load(path: place.sourcesYml.path)
        #expect(config.sources.count == 300)
        #expect(try Data(contentsOf: entry) == good)
    }

    @Test func smallAndInvalidFilesAreNotKept() throws {
        let place = try Place()
        defer { try? FileManager.default.removeItem(at: place.directory) }
        try place.write(Self.sourcesYml(count: 3))
        #expect(try place.loader().load(path: place.sourcesYml.path).sources.count == 3)
        // A large file with an unknown plugin: its error, every time, and nothing kept.
        try place.write(Self.sourcesYml(count: 300).replacingOccurrences(of: "plugin: memory\n    url: https://memory.test/shop/7\n",
                                                                          with: "plugin: memroy\n    url: https://memory.test/shop/7\n"))
        for _ in 0..<2 {
            #expect(throws: ConfigLoadError.self) { try place.loader().load(path: place.sourcesYml.path) }
        }
        #expect(place.entries == [])
    }

    /// A directory others may read (made by hand, or by another program) gets no tree.
    @Test func aDirectoryOthersMayReadIsNotUsed() throws {
        let place = try Place()
        defer { try? FileManager.default.removeItem(at: place.directory) }
        let folder = place.cacheHome.appendingPathComponent("aggregate/parsed-config")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try place.write(Self.sourcesYml(count: 300))
        #expect(try place.loader().load(path: place.sourcesYml.path).sources.count == 300)
        #expect(place.entries == [])
        // Nor is a tree read from it, were one put there.
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder.path)
        _ = try place.loader().load(path: place.sourcesYml.path)
        #expect(place.entries.count == 1)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
        let cache = try #require(ParsedTreeCache(environment: ["XDG_CACHE_HOME": place.cacheHome.path]))
        #expect(cache.tree(at: cache.entry(for: place.sourcesYml.path), for: try Data(contentsOf: place.sourcesYml), file: "x") == nil)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder.path)
        #expect(cache.tree(at: cache.entry(for: place.sourcesYml.path), for: try Data(contentsOf: place.sourcesYml), file: "x") != nil)
    }

    @Test func withoutACacheDirectoryTheFileIsParsed() throws {
        let place = try Place()
        defer { try? FileManager.default.removeItem(at: place.directory) }
        try place.write(Self.sourcesYml(count: 300))
        let loader = ConfigLoader(registry: SourceRegistry([MemorySource.self]), environment: [:])
        #expect(try loader.load(path: place.sourcesYml.path).sources.count == 300)
    }

    /// Every kind of node, and places, survive the binary form; any shorter or longer
    /// form, or one damaged byte, is nil or a tree, never a crash.
    @Test func theBinaryFormKeepsEveryNodeAndRejectsDamage() throws {
        let yaml = """
            sources:
              - {id: "a", n: 12, f: 1.5, b: true, z: ~, t: "héllo\\nworld", list: [1, [2, {k: v}]], empty: {}}
            feed: {title: Café}
            """
        let tree = try #require(try YAMLDocument.parse(yaml, file: "Sources.yml"))
        var data = Data()
        ConfigTreeCoding.encode(tree, into: &data)
        let decoded = try #require(ConfigTreeCoding.decode(data, file: "Sources.yml", maxNodes: 1000))
        #expect(Self.dump(decoded) == Self.dump(tree))
        #expect(Self.dump(tree).contains("t@2:45=text héllo\nworld@2:48, list@2:64=[integer 1@2:71, [integer 2@2:75, {k@2:79=text v@2:82}@2:78]@2:74]@2:70"))
        for length in 0..<data.count {
            #expect(ConfigTreeCoding.decode(data.prefix(length), file: "x", maxNodes: 1000) == nil)
        }
        #expect(ConfigTreeCoding.decode(data + [0], file: "x", maxNodes: 1000) == nil)
        #expect(ConfigTreeCoding.decode(data, file: "x", maxNodes: 10) == nil)
        for index in data.indices {
            for flip: UInt8 in [0x01, 0x80, 0xff] {
                var damaged = data
                damaged[index] ^= flip
                _ = ConfigTreeCoding.decode(damaged, file: "x", maxNodes: 1000)
            }
        }
    }

    /// A tree as text: every node's kind, value and place, every key's place.
    static func dump(_ node: ConfigNode) -> String {
        let place = "@\(node.location.line):\(node.location.column)"
        switch node.value {
        case .scalar(let scalar): return "\(scalar.kind) \(scalar.text)\(place)"
        case .list(let items): return "[\(items.map(dump).joined(separator: ", "))]\(place)"
        case .map(let entries):
            return "{\(entries.map { "\($0.key)@\($0.keyLocation.line):\($0.keyLocation.column)=\(dump($0.value))" }.joined(separator: ", "))}\(place)"
        }
    }
}
