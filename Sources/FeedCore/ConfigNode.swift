import Foundation

/// A position in a configuration file, printed as `Sources.yml:12:7`.
public struct ConfigLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String { "\(file):\(line):\(column)" }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }
}

/// A parsed configuration value with its position, independent of the file format, so
/// source modules can validate their options without knowing YAML.
public struct ConfigNode: Sendable {
    public enum Value: Sendable {
        case scalar(ConfigScalar)
        case list([ConfigNode])
        case map([ConfigEntry])
    }

    public var value: Value
    public var location: ConfigLocation

    public init(_ value: Value, at location: ConfigLocation) {
        self.value = value
        self.location = location
    }

    /// `text "fast"`, `a list`, `a mapping`: what the node is, for messages.
    public var kindDescription: String {
        switch value {
        case .scalar(let scalar): scalar.kindDescription
        case .list: "a list"
        case .map: "a mapping"
        }
    }
}

/// A scalar as written, with the type the file format resolved for it.
public struct ConfigScalar: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case text, integer, float, boolean, null }

    public var text: String
    public var kind: Kind
    /// Written between quotes: the text starts one column past the node's location.
    public var quoted: Bool

    public init(text: String, kind: Kind, quoted: Bool = false) {
        self.text = text
        self.kind = kind
        self.quoted = quoted
    }

    var kindDescription: String {
        switch kind {
        case .text: "text \"\(text)\""
        case .integer, .float: "the number \(text)"
        case .boolean: "\(text)"
        case .null: "nothing (null)"
        }
    }
}

/// One `key: value` pair of a mapping, in file order.
public struct ConfigEntry: Sendable {
    public var key: String
    public var keyLocation: ConfigLocation
    public var value: ConfigNode

    public init(key: String, keyLocation: ConfigLocation, value: ConfigNode) {
        self.key = key
        self.keyLocation = keyLocation
        self.value = value
    }
}

/// One problem in a configuration file: `Sources.yml:5:14: sources[0].timeout: …`.
public struct ConfigIssue: Error, Sendable, Hashable, CustomStringConvertible {
    public var location: ConfigLocation
    /// `sources[2].plugin`
    public var path: String
    public var message: String
    /// For an unknown key: the keys that are allowed there (what a module accepts).
    public var allowedKeys: [String]?

    public init(location: ConfigLocation, path: String, message: String, allowedKeys: [String]? = nil) {
        self.location = location
        self.path = path
        self.message = message
        self.allowedKeys = allowedKeys
    }

    public var description: String {
        path.isEmpty ? "\(location): \(message)" : "\(location): \(path): \(message)"
    }
}

/// Every problem found in one configuration, in file order.
public struct ConfigIssues: Error, Sendable, CustomStringConvertible {
    public var issues: [ConfigIssue]

    public init(_ issues: [ConfigIssue]) {
        self.issues = issues.sorted { $0.location < $1.location }
    }

    public var description: String { issues.map(\.description).joined(separator: "\n") }
}

/// Collects the problems found while reading one configuration.
public final class ConfigIssueLog {
    public private(set) var issues: [ConfigIssue] = []

    public init() {}

    public func report(_ issue: ConfigIssue) {
        issues.append(issue)
    }
}
