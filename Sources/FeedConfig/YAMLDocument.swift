import FeedCore
import Foundation
import Yams

/// Turns YAML text into a format-free ``ConfigNode`` tree that keeps every node's
/// line and column, so type errors can be reported where they are.
enum YAMLDocument {
    /// The most values a configuration may expand to. Aliases share nodes, so a few
    /// hundred bytes can stand for billions of values ("billion laughs"); counting
    /// while converting stops that within milliseconds.
    static let maxValues = 100_000
    /// The largest configuration file read.
    static let maxBytes = 1 << 20

    /// Parses `text`. A syntax error throws one ``ConfigIssue`` with its position.
    static func parse(_ text: String, file: String) throws(ConfigIssues) -> ConfigNode? {
        let start = ConfigLocation(file: file, line: 1, column: 1)
        guard text.utf8.count <= maxBytes else {
            throw ConfigIssues([ConfigIssue(location: start, path: "",
                                            message: "the file is larger than \(maxBytes / 1024) KiB; a sources file is far smaller")])
        }
        let root: Node?
        do {
            // Untagged plain scalars are classified by YAMLPlainScalar, not by regular expressions.
            root = try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            throw ConfigIssues([issue(for: error, file: file)])
        } catch {
            throw ConfigIssues([ConfigIssue(location: ConfigLocation(file: file, line: 1, column: 1),
                                            path: "", message: "cannot read YAML: \(error)")])
        }
        guard let root else { return nil }
        var budget = maxValues
        guard let converted = convert(root, file: file, budget: &budget) else {
            throw ConfigIssues([ConfigIssue(location: start, path: "",
                                            message: "the file expands to more than \(maxValues) values (through YAML aliases?); write it out plainly")])
        }
        return converted
    }

    private static func issue(for error: YamlError, file: String) -> ConfigIssue {
        func at(_ mark: Mark, _ message: String) -> ConfigIssue {
            ConfigIssue(location: ConfigLocation(file: file, line: mark.line, column: mark.column),
                        path: "", message: "YAML syntax error: \(message)")
        }
        switch error {
        case .scanner(let context, let problem, let mark, _),
             .parser(let context, let problem, let mark, _),
             .composer(let context, let problem, let mark, _):
            return at(mark, [problem, context?.text].compactMap { $0 }.joined(separator: " "))
        case .duplicatedKeysInMapping(let duplicates, let context):
            return at(context.mark, "duplicate key \(duplicates.map { "\"\($0)\"" }.joined(separator: ", "))")
        case .reader(let problem, _, _, _):
            return ConfigIssue(location: ConfigLocation(file: file, line: 1, column: 1), path: "",
                               message: "cannot read the file: \(problem)")
        default:
            return ConfigIssue(location: ConfigLocation(file: file, line: 1, column: 1), path: "",
                               message: "YAML error: \(error)")
        }
    }

    /// `nil` once more than `budget` values were converted.
    private static func convert(_ node: Node, file: String, budget: inout Int) -> ConfigNode? {
        budget -= 1
        guard budget >= 0 else { return nil }
        let mark = node.mark
        let location = ConfigLocation(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1)
        switch node {
        case .scalar(let scalar):
            let quoted = scalar.style == .singleQuoted || scalar.style == .doubleQuoted
            return ConfigNode(.scalar(ConfigScalar(text: scalar.string, kind: kind(of: scalar), quoted: quoted)), at: location)
        case .sequence(let sequence):
            var items: [ConfigNode] = []
            for item in sequence {
                guard let converted = convert(item, file: file, budget: &budget) else { return nil }
                items.append(converted)
            }
            return ConfigNode(.list(items), at: location)
        case .mapping(let mapping):
            var entries: [ConfigEntry] = []
            entries.reserveCapacity(mapping.count)
            for pair in mapping {
                let name: String, keyLocation: ConfigLocation
                if case .scalar(let key) = pair.key {
                    // A scalar key needs only its text and place: its type is never asked.
                    budget -= 1
                    guard budget >= 0 else { return nil }
                    name = key.string
                    keyLocation = ConfigLocation(file: file, line: key.mark?.line ?? 1, column: key.mark?.column ?? 1)
                } else {
                    guard let key = convert(pair.key, file: file, budget: &budget) else { return nil }
                    name = pair.key.string ?? "\(pair.key)"
                    keyLocation = key.location
                }
                guard let value = convert(pair.value, file: file, budget: &budget) else { return nil }
                entries.append(ConfigEntry(key: name, keyLocation: keyLocation, value: value))
            }
            return ConfigNode(.map(entries), at: location)
        case .alias:
            return ConfigNode(.scalar(ConfigScalar(text: "\(node)", kind: .text)), at: location)
        }
    }

    private static func kind(of scalar: Node.Scalar) -> ConfigScalar.Kind {
        // The stored tag is the one written: empty for a plain scalar without one.
        let written = scalar.tag.description
        if written.isEmpty { return scalar.style == .plain ? YAMLPlainScalar.kind(scalar.string) : .text }
        switch Tag.Name(rawValue: written) {
        case .int: return .integer
        case .float: return .float
        case .bool: return .boolean
        case .null: return .null
        default: return .text
        }
    }
}
