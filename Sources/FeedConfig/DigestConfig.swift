import FeedCore
import FeedFormats
import Foundation

/// One entry of `digests:` in Sources.yml: a named, scheduled "what is new" report.
public struct DigestConfig: Sendable {
    /// How a digest is rendered: one of its own report formats (grouped by source, with
    /// the change spelled out), or any card format of ``CardFormats`` (`atom`, `rss`,
    /// `jsonfeed`, `csv`, …), which prints the changed cards in that format.
    public struct Format: RawRepresentable, Hashable, Sendable, CaseIterable {
        public let rawValue: String

        public init?(rawValue: String) {
            guard Self.allCases.contains(where: { $0.rawValue == rawValue }) else { return nil }
            self.rawValue = rawValue
        }

        private init(known: String) {
            rawValue = known
        }

        public static let markdown = Format(known: "markdown")
        public static let text = Format(known: "text")
        public static let html = Format(known: "html")
        public static let jsonl = Format(known: "jsonl")
        /// The formats that render a report of changes.
        public static let reportFormats: [Format] = [.markdown, .text, .html, .jsonl]

        public static var allCases: [Format] {
            reportFormats + CardFormats.names.filter { name in !reportFormats.contains { $0.rawValue == name } }.map(Format.init(known:))
        }

        /// The card format to print with, when this is not a report format.
        public var cardFormat: (any CardFormat.Type)? {
            Self.reportFormats.contains(self) ? nil : CardFormats.named(rawValue)
        }
    }

    public var name: String
    /// Source ids; empty = every enabled source.
    public var sources: [String]
    public var format: Format
    /// At most this many changes per report; the rest wait for the next run.
    public var maxItems: Int?
    /// How often `digest --due` runs it, in seconds.
    public var every: Double?
    /// A Mustache template file (absolute, or relative to Sources.yml).
    public var template: String?
    /// Write here instead of stdout (absolute, or relative to Sources.yml).
    public var output: String?
    /// What is reported (`when:`); empty = ``DigestCondition/changes`` (new, and price drops).
    public var when: [DigestCondition] = []
    /// Where the report goes (`deliver:`); empty = stdout or `output`.
    public var deliver: [DeliveryTargetConfig] = []
    public var location: ConfigLocation

    public init(name: String, sources: [String] = [], format: Format = .markdown, maxItems: Int? = nil,
                every: Double? = nil, template: String? = nil, output: String? = nil,
                location: ConfigLocation = ConfigLocation(file: "Sources.yml", line: 1, column: 1)) {
        self.name = name
        self.sources = sources
        self.format = format
        self.maxItems = maxItems
        self.every = every
        self.template = template
        self.output = output
        self.location = location
    }

    /// `90s`, `30m`, `6h`, `1d`, `2w` in seconds; nil for anything else.
    public static func seconds(fromDuration text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        guard let unit = text.last.flatMap({ units[$0] }), let value = Double(text.dropLast()), value > 0 else { return nil }
        return value * unit
    }

    /// Reads `digests:`; sources must name configured ids.
    static func read(_ entries: [ConfigMapReader], sourceIDs: [String], directory: String) -> [DigestConfig] {
        var digests: [DigestConfig] = []
        for entry in entries {
            entry.rejectUnknownKeys(["name", "sources", "format", "max_items", "every", "template", "output", "when", "deliver"])
            let name = entry.string("name", required: true)
            if let name, !ConfigLoader.isValidID(name) {
                entry.report("name", "\"\(name)\" is not a valid digest name: use lowercase letters, digits and -")
            }
            if let name, digests.contains(where: { $0.name == name }) {
                entry.report("name", "duplicate digest name \"\(name)\"")
            }
            var sources: [String] = []
            for (path, node) in entry.list("sources") ?? [] {
                guard case .scalar(let scalar) = node.value, scalar.kind != .null else {
                    entry.issues.report(ConfigIssue(location: node.location, path: path, message: "expected a source id, got \(node.kindDescription)"))
                    continue
                }
                if !sourceIDs.contains(scalar.text) {
                    entry.issues.report(ConfigIssue(location: node.location, path: path,
                        message: "unknown source \"\(scalar.text)\" (known: \(sourceIDs.joined(separator: ", ")))"))
                }
                sources.append(scalar.text)
            }
            let format = entry.choice("format", from: Format.allCases.map(\.rawValue)).flatMap(Format.init(rawValue:))
            let maxItems = entry.integer("max_items", minimum: 1)
            var every: Double?
            if let text = entry.string("every") {
                every = seconds(fromDuration: text)
                if every == nil { entry.report("every", "expected a duration such as 30m, 6h or 1d, got \"\(text)\"") }
            }
            func path(_ key: String) -> String? {
                entry.string(key).map { $0.hasPrefix("/") ? $0 : URL(fileURLWithPath: directory).appendingPathComponent($0).path }
            }
            let template = path("template")
            if let template, !FileManager.default.fileExists(atPath: template) {
                entry.report("template", "no template file at \(template)")
            }
            let when = (entry.list("when") ?? []).compactMap { path, node in
                DigestCondition.read(node, path: path, sourceIDs: sourceIDs, issues: entry.issues)
            }
            if entry.list("when")?.isEmpty == true { entry.report("when", "lists no condition; leave it out for new cards and price drops") }
            let deliver = (entry.mapList("deliver") ?? []).compactMap { DeliveryTargetConfig.read($0, directory: directory) }
            if entry.list("deliver")?.isEmpty == true { entry.report("deliver", "lists no target; leave it out to print the digest") }
            if entry.node("deliver") != nil, entry.node("output") != nil {
                entry.report("output", "and deliver: both say where the report goes; write the file as a target: {file: PATH}")
            }
            var keys = Set<String>()
            for target in deliver where !keys.insert(target.writtenKey).inserted {
                entry.issues.report(ConfigIssue(location: target.location, path: entry.path(of: "deliver"), message: "\(target.name) is listed twice"))
            }
            guard let name, ConfigLoader.isValidID(name) else { continue }
            var digest = DigestConfig(name: name, sources: sources, format: format ?? .markdown, maxItems: maxItems,
                                      every: every, template: template, output: path("output"), location: entry.location)
            digest.when = when
            digest.deliver = deliver
            digests.append(digest)
        }
        return digests
    }
}
