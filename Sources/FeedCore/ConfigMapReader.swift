import Foundation

/// Reads a configuration mapping with typed accessors. Every problem is reported to
/// the shared ``ConfigIssueLog`` with its line, column and path, and reading goes on,
/// so one pass finds every problem in a file.
public struct ConfigMapReader {
    /// Path of this mapping for messages: `sources[1].options`.
    public let path: String
    /// Where the mapping starts (or where it would be, when absent).
    public let location: ConfigLocation
    public let entries: [ConfigEntry]
    public let issues: ConfigIssueLog

    /// A reader over `node`; a missing node reads as an empty mapping, and a node that
    /// is not a mapping is reported.
    public init(node: ConfigNode?, path: String, fallbackLocation: ConfigLocation, issues: ConfigIssueLog) {
        self.path = path
        self.issues = issues
        self.location = node?.location ?? fallbackLocation
        switch node?.value {
        case .map(let entries):
            self.entries = entries
        case nil:
            self.entries = []
        case .some:
            self.entries = []
            if let node {
                issues.report(ConfigIssue(location: node.location, path: path,
                                          message: "expected a mapping of keys to values, got \(node.kindDescription)"))
            }
        }
    }

    /// `path.key`, for messages about one key.
    public func path(of key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    public func node(_ key: String) -> ConfigNode? {
        entries.last(where: { $0.key == key })?.value
    }

    /// Where `key`'s value is, or the mapping itself when the key is absent.
    public func location(of key: String) -> ConfigLocation {
        node(key)?.location ?? location
    }

    /// Reports a problem with `key` (or with the whole mapping when `key` is nil).
    public func report(_ key: String?, _ message: String, at location: ConfigLocation? = nil) {
        issues.report(ConfigIssue(
            location: location ?? key.map(self.location(of:)) ?? self.location,
            path: key.map(path(of:)) ?? path, message: message))
    }

    private func scalar(_ key: String, required: Bool, expected: String) -> (ConfigScalar, ConfigLocation)? {
        guard let node = node(key) else {
            if required { report(key, "is required") }
            return nil
        }
        guard case .scalar(let scalar) = node.value, scalar.kind != .null else {
            report(key, "expected \(expected), got \(node.kindDescription)")
            return nil
        }
        return (scalar, node.location)
    }

    /// Any non-null scalar, as written.
    public func string(_ key: String, required: Bool = false, allowEmpty: Bool = false) -> String? {
        guard let (scalar, _) = scalar(key, required: required, expected: "text") else { return nil }
        // Spaces and tabs only (`CharacterSet.whitespaces`), without bridging to NSString.
        if !allowEmpty && scalar.text.unicodeScalars.allSatisfy({ $0 == "\t" || $0 == " " || !$0.isASCII && $0.properties.generalCategory == .spaceSeparator }) {
            report(key, "must not be empty")
            return nil
        }
        return scalar.text
    }

    /// A whole number, at least `minimum` and at most `maximum`.
    public func integer(_ key: String, required: Bool = false, minimum: Int? = nil, maximum: Int? = nil) -> Int? {
        guard let (scalar, _) = scalar(key, required: required, expected: "a whole number") else { return nil }
        guard scalar.kind == .integer else {
            report(key, "expected a whole number, got \(scalar.kindDescription)")
            return nil
        }
        let range = "\(minimum.map { "from \($0) " } ?? "")\(maximum.map { "up to \($0)" } ?? "")"
        guard let value = Int(scalar.text) else {
            report(key, "\(scalar.text) is too large\(range.isEmpty ? "" : "; use a whole number \(range)")")
            return nil
        }
        if let minimum, value < minimum {
            report(key, "must be at least \(minimum), got \(value)")
            return nil
        }
        if let maximum, value > maximum {
            report(key, "must be at most \(maximum), got \(value)")
            return nil
        }
        return value
    }

    /// An exact decimal number (a price), greater than zero when `positive`.
    public func decimal(_ key: String, required: Bool = false, positive: Bool = false) -> Decimal? {
        guard let (scalar, _) = scalar(key, required: required, expected: "a number") else { return nil }
        guard scalar.kind == .integer || scalar.kind == .float else {
            report(key, "expected a number, got \(scalar.kindDescription)")
            return nil
        }
        guard let value = Money.parse(scalar.text) else {
            report(key, "\(scalar.text) is not a plain decimal amount; write it with digits and a point, like 19.00")
            return nil
        }
        if positive && value <= 0 {
            report(key, "must be greater than 0, got \(scalar.text)")
            return nil
        }
        return value
    }

    /// A number of seconds within `range`.
    /// A number of seconds, or a duration with its unit: `90`, `1.5`, `30s`, `15m`, `1h`, `2d`.
    public func seconds(_ key: String, in range: ClosedRange<Double>) -> Double? {
        guard let (scalar, _) = scalar(key, required: false, expected: "a number of seconds") else { return nil }
        let number = scalar.kind == .integer || scalar.kind == .float ? Double(scalar.text) : Self.duration(scalar)
        guard let value = number, value.isFinite else {
            report(key, "expected a number of seconds (or 30s, 15m, 1h, 2d), got \(scalar.kindDescription)")
            return nil
        }
        guard range.contains(value) else {
            report(key, "must be from \(SecondsFormat.text(range.lowerBound)) to \(SecondsFormat.text(range.upperBound)), got \(scalar.text)")
            return nil
        }
        return value
    }

    /// `15m` as 900 seconds: a number and one of s, m, h, d (nil for anything else).
    static func duration(_ scalar: ConfigScalar) -> Double? {
        guard scalar.kind == .text, let unit = scalar.text.last, let number = Double(scalar.text.dropLast()), number >= 0 else { return nil }
        let scale: Double? = switch unit {
        case "s": 1
        case "m": 60
        case "h": 3600
        case "d": 86_400
        default: nil
        }
        return scale.map { number * $0 }
    }

    /// An ISO 4217 currency code (`EUR`), `fallback` when absent.
    public func currency(_ key: String, default fallback: String) -> String {
        guard let code = string(key) else { return fallback }
        guard code.count == 3, code.allSatisfy({ $0.isASCII && $0.isUppercase }) else {
            report(key, "expected an ISO 4217 code such as EUR, got \"\(code)\"")
            return fallback
        }
        return code
    }

    public func boolean(_ key: String) -> Bool? {
        guard let (scalar, _) = scalar(key, required: false, expected: "true or false") else { return nil }
        guard scalar.kind == .boolean else {
            report(key, "expected true or false, got \(scalar.kindDescription)")
            return nil
        }
        return ["true", "yes", "on"].contains(scalar.text.lowercased())
    }

    /// One of `choices`.
    public func choice(_ key: String, from choices: [String]) -> String? {
        guard let value = string(key) else { return nil }
        guard choices.contains(value) else {
            report(key, "must be one of \(choices.joined(separator: ", ")), got \"\(value)\"")
            return nil
        }
        return value
    }

    /// An absolute http or https URL.
    public func url(_ key: String, required: Bool = false) -> URL? {
        guard let text = string(key, required: required) else { return nil }
        return Self.httpURL(text) ?? {
            report(key, "expected an absolute http(s) URL, got \"\(text)\"")
            return nil
        }()
    }

    /// `text` as an absolute http(s) URL with a host, or nil.
    public static func httpURL(_ text: String) -> URL? {
        guard let url = URL(string: text), url.isWebAddress else { return nil }
        return url
    }

    /// A nested mapping.
    public func map(_ key: String) -> ConfigMapReader? {
        guard let node = node(key) else { return nil }
        return ConfigMapReader(node: node, path: path(of: key), fallbackLocation: node.location, issues: issues)
    }

    /// A list; each element with its path `key[i]`.
    public func list(_ key: String) -> [(path: String, node: ConfigNode)]? {
        guard let node = node(key) else { return nil }
        guard case .list(let items) = node.value else {
            report(key, "expected a list, got \(node.kindDescription)")
            return nil
        }
        return items.enumerated().map { ("\(path(of: key))[\($0.offset)]", $0.element) }
    }

    /// A list of mappings, each as a reader.
    public func mapList(_ key: String) -> [ConfigMapReader]? {
        list(key)?.map { ConfigMapReader(node: $0.node, path: $0.path, fallbackLocation: $0.node.location, issues: issues) }
    }

    /// Reports every key not in `allowed`, suggesting the closest known key.
    public func rejectUnknownKeys(_ allowed: [String]) {
        for entry in entries where !allowed.contains(entry.key) {
            let known = allowed.sorted().joined(separator: ", ")
            let hint = Self.closest(to: entry.key, in: allowed).map { "did you mean \"\($0)\"? " } ?? ""
            issues.report(ConfigIssue(location: entry.keyLocation, path: path(of: entry.key),
                                      message: "unknown key (\(hint)known: \(known))", allowedKeys: allowed.sorted()))
        }
    }

    /// For source modules: reports unknown keys, then throws every problem found.
    public func finish(allowedKeys: [String]) throws {
        rejectUnknownKeys(allowedKeys)
        if !issues.issues.isEmpty { throw ConfigIssues(issues.issues) }
    }

    static func closest(to word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(word.lowercased(), $0)) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(1, word.count / 3) else { return nil }
        return best.0
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var current = [i + 1]
            for (j, cb) in b.enumerated() {
                current.append(Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
