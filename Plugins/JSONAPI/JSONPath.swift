import FeedCore
import Foundation

/// A path into a JSON body: dotted keys with `[n]` indexes (`data.attributes.title`,
/// `images[0]`, `[0].id`); `.` is the body itself.
struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    enum Step: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    let steps: [Step]
    let description: String

    /// Parses `text`; nil when it is not a path.
    init?(_ text: String) {
        description = text
        guard text != "." else {
            steps = []
            return
        }
        var steps: [Step] = []
        for (position, part) in text.split(separator: ".", omittingEmptySubsequences: false).enumerated() {
            var rest = Substring(part)
            let key = rest.prefix { $0 != "[" }
            rest = rest.dropFirst(key.count)
            if key.isEmpty && (position > 0 || rest.isEmpty) { return nil }
            if !key.isEmpty {
                guard key.allSatisfy({ !"{}[] ".contains($0) }) else { return nil }
                steps.append(.key(String(key)))
            }
            while !rest.isEmpty {
                guard rest.first == "[", let close = rest.firstIndex(of: "]"),
                      let index = Int(rest[rest.index(after: rest.startIndex)..<close]), index >= 0
                else { return nil }
                steps.append(.index(index))
                rest = rest[rest.index(after: close)...]
            }
        }
        self.steps = steps
    }

    /// Why a path finds nothing: the part that was missing and what was there instead.
    struct Miss: Error, Sendable {
        /// The path up to and including the missing step (`data`, `data.items[3]`).
        var missing: String
        /// The keys of the object where the step was looked for; nil when it was not an object.
        var available: [String]?
        /// What was found instead (`a list`), when not an object.
        var found: String?
    }

    /// The value at this path, or why there is none. `null` counts as a value.
    func resolve(in root: JSONValue) -> Result<JSONValue, Miss> {
        var value = root
        var walked = ""
        for step in steps {
            switch step {
            case .key(let key):
                walked += walked.isEmpty ? key : ".\(key)"
                guard case .object(let members) = value else {
                    return .failure(Miss(missing: walked, available: nil, found: value.kindDescription))
                }
                guard let next = members[key] else {
                    return .failure(Miss(missing: walked, available: members.keys.sorted(), found: nil))
                }
                value = next
            case .index(let index):
                walked += "[\(index)]"
                guard case .array(let items) = value else {
                    return .failure(Miss(missing: walked, available: nil, found: value.kindDescription))
                }
                guard index < items.count else {
                    return .failure(Miss(missing: walked, available: nil, found: "a list of \(items.count)"))
                }
                value = items[index]
            }
        }
        return .success(value)
    }

    /// The value at this path; nil when missing or `null`.
    func value(in root: JSONValue) -> JSONValue? {
        guard case .success(let value) = resolve(in: root), value != .null else { return nil }
        return value
    }
}

extension JSONValue {
    /// A scalar as text: strings as they are, numbers exactly, booleans as true/false.
    package var scalarText: String? {
        switch self {
        case .string(let text): text
        case .number(let number): "\(number)"
        case .bool(let flag): flag ? "true" : "false"
        default: nil
        }
    }
}
