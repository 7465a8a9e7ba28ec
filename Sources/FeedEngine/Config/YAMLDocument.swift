import FeedCore
import Foundation
import Yams

/// Turns YAML text into a format-free ``ConfigNode`` tree that keeps every node's
/// line and column, so type errors can be reported where they are.
enum YAMLDocument {
    /// Parses `text`. A syntax error throws one ``ConfigIssue`` with its position.
    static func parse(_ text: String, file: String) throws(ConfigIssues) -> ConfigNode? {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw ConfigIssues([issue(for: error, file: file)])
        } catch {
            throw ConfigIssues([ConfigIssue(location: ConfigLocation(file: file, line: 1, column: 1),
                                            path: "", message: "cannot read YAML: \(error)")])
        }
        return root.map { convert($0, file: file) }
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

    private static func convert(_ node: Node, file: String) -> ConfigNode {
        let mark = node.mark
        let location = ConfigLocation(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1)
        switch node {
        case .scalar(let scalar):
            return ConfigNode(.scalar(ConfigScalar(text: scalar.string, kind: kind(of: node))), at: location)
        case .sequence(let sequence):
            return ConfigNode(.list(sequence.map { convert($0, file: file) }), at: location)
        case .mapping(let mapping):
            let entries = mapping.map { pair in
                let key = convert(pair.key, file: file)
                return ConfigEntry(key: pair.key.string ?? "\(pair.key)", keyLocation: key.location,
                                   value: convert(pair.value, file: file))
            }
            return ConfigNode(.map(entries), at: location)
        case .alias:
            return ConfigNode(.scalar(ConfigScalar(text: "\(node)", kind: .text)), at: location)
        }
    }

    private static func kind(of node: Node) -> ConfigScalar.Kind {
        switch Tag.Name(rawValue: node.tag.rawValue) {
        case .int: .integer
        case .float: .float
        case .bool: .boolean
        case .null: .null
        default: .text
        }
    }
}
