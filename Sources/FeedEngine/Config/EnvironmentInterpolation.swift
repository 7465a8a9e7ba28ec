import Foundation

/// Expands `${VAR}` and `${VAR:-default}` in configuration values.
enum EnvironmentInterpolation {
    enum Failure: Error, Equatable {
        case undefined(String)
        case malformed
    }

    static func expand(_ text: String, environment: [String: String]) throws(Failure) -> String {
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
