import FeedCore
import FeedSupport
import FeedFormats
import Foundation

/// Reads and validates Sources.yml, reporting every problem at once with its line and
/// column, including the problems each source module finds in its own options.
public struct ConfigLoader: Sendable {
    public let registry: SourceRegistry
    public let environment: [String: String]

    static let sourceKeys = [
        "id", "plugin", "enabled", "url", "headers", "timeout", "max_pages", "max_items", "fallback", "retries",
        "cache_ttl", "deadline", "max_body", "options", "filters", "refresh", "record", "keep", "name",
        "full_content",
    ]

    public init(registry: SourceRegistry, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.registry = registry
        self.environment = environment
    }

    /// Finds the configuration: `explicitPath`, else `./Sources.yml`, else
    /// `$XDG_CONFIG_HOME/aggregate/Sources.yml` (`~/.config` when unset).
    public func locate(explicitPath: String?, currentDirectory: String = FileManager.default.currentDirectoryPath)
        throws(ConfigLoadError) -> String
    {
        if let explicitPath {
            guard FileManager.default.fileExists(atPath: explicitPath) else { throw .missing([explicitPath]) }
            return explicitPath
        }
        let candidates = candidates(currentDirectory: currentDirectory)
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw .missing(candidates)
        }
        return found
    }

    /// Where a Sources.yml is looked for without `--config`, first found first:
    /// `./Sources.yml`, then `$XDG_CONFIG_HOME/aggregate/Sources.yml`.
    public func candidates(currentDirectory: String = FileManager.default.currentDirectoryPath) -> [String] {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(home)/.config"
        return ["\(currentDirectory)/Sources.yml", "\(configHome)/aggregate/Sources.yml"]
    }

    /// Loads the file at `path`; messages name it as given.
    public func load(path: String) throws(ConfigLoadError) -> FeedConfig {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path) }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .notUTF8(ConfigLocation.firstInvalidUTF8(in: data, file: Self.displayName(path)))
        }
        do {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            let file = Self.displayName(path)
            if data.count >= ParsedTreeCache.minimumBytes, let cache = ParsedTreeCache(environment: environment) {
                return try load(data, text: text, path: path, file: file, directory: directory, keptIn: cache)
            }
            return try load(text: text, file: file, directory: directory)
        } catch {
            throw .invalid(error)
        }
    }

    /// A large file: from the tree kept for these bytes when there is one, else parsed, and
    /// its tree kept once it is known to be a valid configuration.
    private func load(_ data: Data, text: String, path: String, file: String, directory: String,
                      keptIn cache: ParsedTreeCache) throws(ConfigIssues) -> FeedConfig {
        let entry = cache.entry(for: path)
        if let tree = cache.tree(at: entry, for: data, file: file) {
            return try load(tree: tree, file: file, directory: directory)
        }
        let tree = try YAMLDocument.parse(text, file: file)
        let config = try load(tree: tree, file: file, directory: directory)
        if let tree { cache.keep(tree, at: entry, for: data) }
        return config
    }

    /// `./Sources.yml` → `Sources.yml`; other paths unchanged.
    static func displayName(_ path: String) -> String {
        let cwd = FileManager.default.currentDirectoryPath + "/"
        return path.hasPrefix(cwd) ? String(path.dropFirst(cwd.count)) : path
    }

    /// `directory` resolves relative digest `template`/`output` paths.
    public func load(text: String, file: String,
                     directory: String = FileManager.default.currentDirectoryPath) throws(ConfigIssues) -> FeedConfig {
        try load(tree: YAMLDocument.parse(text, file: file), file: file, directory: directory)
    }

    /// The configuration in a parsed tree (nil: an empty file).
    private func load(tree: ConfigNode?, file: String, directory: String) throws(ConfigIssues) -> FeedConfig {
        let log = ConfigIssueLog()
        let start = ConfigLocation(file: file, line: 1, column: 1)
        // An empty file is an empty list: a feed list starts from nothing (`aggregate add`).
        let root = tree ?? ConfigNode(.map([]), at: start)
        let top = ConfigMapReader(node: root, path: "", fallbackLocation: start, issues: log)
        top.rejectUnknownKeys(["sources", "digests", "feed", "state", "filters", "keep", "defaults", "merge"])
        let merge = top.choice("merge", from: ["same-item", "none"])
        let defaults = SourceDefaults.read(in: top)
        let filters = CardFilter.read(in: top)
        let keep = KeepPolicy.read(in: top, over: .default) ?? .default
        var sources: [SourceConfig] = []
        var warnings: [ConfigIssue] = []
        // `sources:` with nothing under it, or no `sources:` yet, is a list with nothing in
        // it: the commands that read cards say so (``FeedConfig/sources`` is empty).
        let empty: Bool = switch top.node("sources")?.value {
        case nil: true
        case .scalar(let scalar)?: scalar.kind == .null
        default: false
        }
        if !empty, let entries = top.mapList("sources") {
            var seen: [String: String] = [:]
            let directoryURL = URL(fileURLWithPath: directory)
            for entry in entries {
                let (source, id) = readSource(entry, directory: directoryURL, keep: keep, defaults: defaults, warnings: &warnings)
                if let id, let first = seen[id] {
                    entry.report("id", "duplicate id \"\(id)\" (already used by \(first))")
                    continue
                }
                if let id { seen[id] = entry.path }
                if var source {
                    source.definition = SourceDefinition(entry: ConfigNode(.map(entry.entries), at: entry.location),
                                                         everySource: [top.node("filters"), top.node("keep")])
                    sources.append(source)
                }
            }
        }
        let digests = DigestConfig.read(top.mapList("digests") ?? [], sourceIDs: sources.map(\.id), directory: directory)
        var feed = FeedInfo()
        if let block = top.map("feed") {
            block.rejectUnknownKeys(["title", "link", "id"])
            feed.title = block.string("title") ?? feed.title
            feed.link = block.url("link")
            feed.id = block.string("id")
        }
        var state: StateLocation?
        if let text = expanded(top, "state") {
            do {
                state = try StateLocation(parsing: text, relativeTo: URL(fileURLWithPath: directory))
            } catch {
                top.report("state", error.description)
            }
        }
        if !log.issues.isEmpty { throw ConfigIssues(log.issues) }
        var config = FeedConfig(file: file, sources: sources, digests: digests, feed: feed, state: state, filters: filters)
        config.defaultRefresh = defaults.refresh
        config.mergesSameItems = merge == "same-item"
        config.keep = keep
        config.warnings = warnings
        return config
    }

    /// The source, when valid, and its id, when it has a valid one.
    private func readSource(_ entry: ConfigMapReader, directory: URL, keep: KeepPolicy, defaults: SourceDefaults,
                            warnings: inout [ConfigIssue]) -> (SourceConfig?, id: String?) {
        entry.rejectUnknownKeys(Self.sourceKeys)
        let id = entry.string("id", required: true)
        if let id, !Self.isValidID(id) {
            entry.report("id", "\"\(id)\" is not a valid id: use lowercase letters, digits and -, starting with a letter or digit")
        }
        let plugin = entry.string("plugin", required: true)
        let sourceType = plugin.flatMap { name in
            registry.type(for: name) ?? {
                entry.report("plugin", "unknown plugin \"\(name)\" (known: \(registry.pluginNames.joined(separator: ", ")))")
                return nil
            }()
        }
        let enabled = entry.boolean("enabled") ?? true
        // A disabled source's variables are not needed until it is enabled: one unset for
        // it must not stop every command. They stand in as `unset`, and validate warns.
        var environment = self.environment
        if !enabled {
            var raw: [(key: String, text: String, location: ConfigLocation)] = []
            if let url = entry.node("url"), case .scalar(let scalar) = url.value { raw.append(("url", scalar.text, url.location)) }
            if let headers = entry.node("headers"), case .map(let pairs) = headers.value {
                for pair in pairs {
                    if case .scalar(let scalar) = pair.value.value { raw.append(("headers.\(pair.key)", scalar.text, pair.value.location)) }
                }
            }
            for (key, text, location) in raw {
                for name in EnvironmentInterpolation.undefinedVariables(in: text, environment: environment) {
                    environment[name] = "unset"
                    warnings.append(ConfigIssue(location: location, path: entry.path.isEmpty ? key : "\(entry.path).\(key)",
                                                message: "environment variable \(name) is not set; the source is disabled, so it is needed only once it is enabled"))
                }
            }
        }
        let localUpstream = sourceType is any LocalUpstreamSource.Type
        let url = entry.node("url") == nil
            ? (localUpstream ? id.flatMap { URL(string: "\(plugin ?? "local")://\($0)") } : { entry.report("url", "is required"); return nil }())
            : entry.expandedString("url", environment: environment).flatMap { text -> URL? in
                let (url, problem) = SourceURL.check(text)
                if let problem { entry.report("url", problem) }
                return url
            }
        let headers = readHeaders(entry, environment: environment)
        let limits = SourceConfig.Limits.self
        let timeout = entry.seconds("timeout", in: limits.timeout) ?? defaults.timeout ?? SourceConfig.defaultTimeout
        let maxPages = entry.integer("max_pages", minimum: 1, maximum: limits.maxPages) ?? SourceConfig.defaultMaxPages
        let maxItems = entry.integer("max_items", minimum: 1, maximum: limits.maxItems) ?? SourceConfig.defaultMaxItems
        let fallback = entry.choice("fallback", from: FallbackPolicy.allCases.map(\.rawValue))
            .flatMap(FallbackPolicy.init(rawValue:)) ?? defaults.fallback ?? .cache
        let retries = entry.integer("retries", minimum: 1, maximum: limits.retries) ?? SourceConfig.defaultRetries
        let cacheTTL = entry.seconds("cache_ttl", in: limits.cacheTTL) ?? defaults.cacheTTL ?? SourceConfig.defaultCacheTTL
        let deadline = entry.seconds("deadline", in: limits.deadline) ?? SourceConfig.defaultDeadline
        let maxBody = byteSize(entry, "max_body", in: limits.maxBody) ?? SourceConfig.defaultMaxBody
        let filters = CardFilter.read(in: entry)
        let refresh = entry.seconds("refresh", in: SourceDefaults.refreshRange) ?? defaults.refresh
        let record = entry.boolean("record") ?? defaults.record ?? true
        let fullContent = FullContent.read(in: entry)
        let name = readName(entry)
        let sourceKeep = KeepPolicy.read(in: entry, over: keep) ?? keep
        guard let id, Self.isValidID(id) else { return (nil, nil) }
        guard let plugin, let url, let headers else { return (nil, id) }
        var config = SourceConfig(
            id: id, plugin: plugin, enabled: enabled, url: url, headers: headers, timeout: timeout,
            maxPages: maxPages, maxItems: maxItems, fallback: fallback, retries: retries, cacheTTL: cacheTTL,
            deadline: deadline, maxBody: maxBody,
            options: entry.node("options"), filters: filters,
            path: entry.path, location: entry.location, directory: directory, environment: environment)
        config.refresh = refresh
        config.record = record
        config.fullContent = fullContent
        config.name = name
        config.keep = sourceKeep
        // Only a disabled source's environment has stand-ins for unset variables.
        config.unsetVariables = enabled ? [] : environment.filter { self.environment[$0.key] == nil }.keys.sorted()
        if let sourceType {
            do {
                _ = try sourceType.init(settings: config.settings, http: UnavailableTransport())
            } catch let issues as ConfigIssues {
                issues.issues.forEach(entry.issues.report)
            } catch {
                entry.report("options", "\(error)")
            }
        }
        return (config, id)
    }

    /// `name:`, what people see for the source (the reader's lists, `aggregate sources`):
    /// one line of at most 200 characters, no controls.
    private func readName(_ entry: ConfigMapReader) -> String? {
        guard let name = entry.string("name") else { return nil }
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        if trimmed.count > 200 {
            entry.report("name", "is \(trimmed.count) characters long; at most 200")
        } else if trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .lineSeparator || $0.properties.generalCategory == .paragraphSeparator }) {
            entry.report("name", "holds a line break or control character; a name is one line of text")
        } else {
            return trimmed
        }
        return nil
    }

    /// A size in bytes within `range`: a whole number of bytes, or with a unit (`64MiB`).
    private func byteSize(_ entry: ConfigMapReader, _ key: String, in range: ClosedRange<Int>) -> Int? {
        guard let text = entry.string(key) else { return nil }
        guard let bytes = ByteSize.parse(text) else {
            entry.report(key, "expected a size such as 64MiB, 512KiB or 1048576 (bytes), got \"\(text)\"")
            return nil
        }
        guard range.contains(bytes) else {
            entry.report(key, "must be from \(ByteSize.text(range.lowerBound)) to \(ByteSize.text(range.upperBound)), got \(text)")
            return nil
        }
        return bytes
    }

    private func readHeaders(_ entry: ConfigMapReader, environment: [String: String]) -> [String: String]? {
        guard let map = entry.map("headers") else { return [:] }
        var headers: [String: String] = [:]
        var valid = true
        for header in map.entries {
            guard let value = map.expandedString(header.key, environment: environment) else {
                valid = false
                continue
            }
            if let problem = HeaderRules.problem(name: header.key, value: value) {
                map.report(header.key, problem, at: header.keyLocation)
                valid = false
                continue
            }
            headers[header.key] = value
        }
        return valid ? headers : nil
    }

    /// The string at `key` with `${VAR}` expanded, or nil after reporting why not.
    private func expanded(_ map: ConfigMapReader, _ key: String) -> String? {
        map.expandedString(key, environment: environment)
    }

    public static func isValidID(_ id: String) -> Bool {
        // On bytes: a multi-byte character is not ASCII, so it fails either way.
        func lowercaseOrDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        guard let first = id.utf8.first, lowercaseOrDigit(first) else { return false }
        return id.utf8.dropFirst().allSatisfy { lowercaseOrDigit($0) || $0 == UInt8(ascii: "-") }
    }
}

/// Why no configuration could be loaded.
public enum ConfigLoadError: Error, Sendable, CustomStringConvertible {
    case missing([String])
    case unreadable(String)
    /// Where the first byte that is not UTF-8 is.
    case notUTF8(ConfigLocation)
    case invalid(ConfigIssues)

    public var description: String {
        switch self {
        case .missing(let paths) where paths.count == 1:
            "no configuration file at \(paths[0])"
        case .missing(let paths):
            "no Sources.yml found (looked for \(paths.joined(separator: " and "))); pass --config PATH"
        case .unreadable(let path):
            "cannot read \(path)"
        case .notUTF8(let location):
            "\(location): the file is not UTF-8 text here; save it as UTF-8"
        case .invalid(let issues):
            issues.description
        }
    }
}

extension ConfigLocation {
    /// The line and column of the first byte of `data` that is not UTF-8.
    static func firstInvalidUTF8(in data: Data, file: String) -> ConfigLocation {
        var line = 1
        var column = 1
        var bytes = data.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while case .valid(let scalar) = parser.parseScalar(from: &bytes) {
            if scalar.count == 1, scalar.first == 0x0A {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return ConfigLocation(file: file, line: line, column: column)
    }
}

/// The transport handed to sources while only their configuration is checked.
struct UnavailableTransport: HTTPTransport {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        throw SourceError.failed("no network while validating the configuration")
    }
}
