import FeedCore
import FeedSupport
import Foundation

/// A card field's source in a record: a path (`title`), or a template with `{path}`
/// placeholders (`"{first_name} {last_name}"`, `"https://shop.example/p/{id}"`).
struct FieldTemplate: Sendable, Hashable {
    enum Part: Sendable, Hashable {
        case literal(String)
        case path(JSONPath)
    }

    let parts: [Part]
    /// A plain path rather than a template: its value is used as it is (a list, a number).
    var path: JSONPath? {
        if parts.count == 1, case .path(let path) = parts[0], !isTemplate { return path }
        return nil
    }

    private let isTemplate: Bool

    /// Parses `text`, or says why it cannot be used.
    static func parse(_ text: String) -> Result<FieldTemplate, FieldProblem> {
        guard text.contains("{") || text.contains("}") else {
            guard let path = JSONPath(text) else {
                return .failure(FieldProblem("\"\(text)\" is not a path: use dotted keys with [n] indexes (data.title, images[0]) or a template with {path}"))
            }
            return .success(FieldTemplate(parts: [.path(path)], isTemplate: false))
        }
        var parts: [Part] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            let literal = rest[..<open]
            if literal.contains("}") { return .failure(FieldProblem("\"\(text)\" has a } without its {")) }
            if !literal.isEmpty { parts.append(.literal(String(literal))) }
            guard let close = rest[open...].firstIndex(of: "}") else {
                return .failure(FieldProblem("\"\(text)\" has a { without its }"))
            }
            let inner = String(rest[rest.index(after: open)..<close])
            guard let path = JSONPath(inner), inner != "." else {
                return .failure(FieldProblem("{\(inner)} in \"\(text)\" is not a path: use dotted keys with [n] indexes"))
            }
            parts.append(.path(path))
            rest = rest[rest.index(after: close)...]
        }
        if rest.contains("}") { return .failure(FieldProblem("\"\(text)\" has a } without its {")) }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        return .success(FieldTemplate(parts: parts, isTemplate: true))
    }

    /// The field as text, trimmed; nil when every placeholder is missing (or the path is).
    /// In a URL field, values inserted after the start are percent-encoded, so an id
    /// cannot change the path or the query.
    func text(in record: JSONValue, encodingForURL: Bool = false) -> String? {
        var result = ""
        var found = false
        for (position, part) in parts.enumerated() {
            switch part {
            case .literal(let literal):
                result += literal
            case .path(let path):
                guard let value = path.value(in: record)?.scalarText else { continue }
                found = true
                result += encodingForURL && position > 0 ? PathSegment.encode(value) : value
            }
        }
        let trimmed = result.trimmingCharacters(in: .whitespacesAndNewlines)
        return found && !trimmed.isEmpty ? trimmed : nil
    }
}

/// Why a record or an option cannot be used, in plain words.
struct FieldProblem: Error, Sendable, Equatable {
    let message: String

    init(_ message: String) {
        self.message = message
    }
}
