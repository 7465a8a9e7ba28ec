import FeedCore
import Foundation

/// Expands `${VAR}` and `${VAR:-default}` in configuration values.
public enum EnvironmentInterpolation {
    public enum Failure: Error, Equatable, Sendable {
        case undefined(String)
        case malformed
    }

    /// Whether `text` has a `$` at all: most values have none, and looking for `${` in a
    /// `Substring` goes through Foundation (a fifth of loading 500 sources).
    static func mayReference(_ text: String) -> Bool {
        text.utf8.contains(UInt8(ascii: "$"))
    }

    /// The variables `text` names without a default that `environment` does not set.
    public static func undefinedVariables(in text: String, environment: [String: String]) -> [String] {
        guard mayReference(text) else { return [] }
        var names: [String] = []
        var rest = Substring(text)
        while let start = rest.range(of: "${"), let end = rest[start.upperBound...].firstIndex(of: "}") {
            let body = rest[start.upperBound..<end]
            if !body.contains(":-"), environment[String(body)] == nil, !names.contains(String(body)) { names.append(String(body)) }
            rest = rest[rest.index(after: end)...]
        }
        return names
    }

    public static func expand(_ text: String, environment: [String: String]) throws(Failure) -> String {
        guard mayReference(text) else { return text }
        var result = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else { throw .malformed }
            let body = rest[start.upperBound..<end]
            let name: Substring
            let fallback: Substring?
            if let separator = body.range(of: ":-") {
                name = body[..<separator.lowerBound]
                fallback = body[separator.upperBound...]
            } else {
                name = body
                fallback = nil
            }
            guard !name.isEmpty, name.allSatisfy({ $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }) else {
                throw .malformed
            }
            if let value = environment[String(name)], !(fallback != nil && value.isEmpty) {
                result += value
            } else if let fallback {
                result += fallback
            } else {
                throw .undefined(String(name))
            }
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }
}

extension ConfigMapReader {
    /// The string at `key` with `${VAR}` expanded from `environment`, or nil after
    /// reporting why not (an unset variable is named, with how to give it a default).
    public func expandedString(_ key: String, environment: [String: String]) -> String? {
        guard let raw = string(key, required: false) else { return nil }
        do {
            return try EnvironmentInterpolation.expand(raw, environment: environment)
        } catch .undefined(let name) {
            report(key, "environment variable \(name) is not set (set it, or write ${\(name):-default})")
        } catch {
            report(key, "malformed ${…}: write ${NAME} or ${NAME:-default}")
        }
        return nil
    }
}
