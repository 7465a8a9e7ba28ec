import FeedCore
import Foundation
import JSONTape

extension HTTPTransport {
    /// GET `url` and decode a 2xx body as `T` with `json`. Other statuses throw
    /// ``SourceError/badStatus(_:)``; a body that does not decode throws
    /// ``SourceError/undecodable(path:reason:)`` naming the JSON path.
    public func getJSON<T: Decodable>(_ type: T.Type, from url: URL, with json: any JSONBodyReader) async throws -> T {
        let response = try await get(url)
        guard response.isSuccess else { throw SourceError.badStatus(response.status) }
        return try json.decode(type, from: response.body)
    }
}

/// Decoding of upstream bodies with errors in plain words: the ``JSONBodyReader`` the
/// engine hands to sources.
public struct JSONBody: JSONBodyReader {
    /// Whether the tape decoder (the `JSONTape` target) reads bodies first; otherwise
    /// Foundation's `JSONDecoder` alone reads them (to rule the tape out when a body
    /// decodes strangely; CI runs the source tests both ways).
    public var usesTape: Bool

    /// The tape first, Foundation for what it leaves: what every run uses.
    public static let tape = JSONBody(usesTape: true)
    /// Foundation's `JSONDecoder` alone.
    public static let foundation = JSONBody(usesTape: false)

    public init(usesTape: Bool) {
        self.usesTape = usesTape
    }

    /// The reader a run's `environment` asks for: `AGGREGATE_JSON_DECODER=foundation`
    /// chooses Foundation's alone, anything else the tape.
    public init(environment: [String: String]) {
        self.init(usesTape: environment["AGGREGATE_JSON_DECODER"] != "foundation")
    }

    /// (With Foundation alone, or a body the tape leaves to Foundation, the whole body is
    /// decoded and the list cut after.)
    public func value(from body: Data, keepingAtMost limit: Int, ofListAt path: [String]) throws -> JSONValue {
        if usesTape, let tree = TapeDecoding.tree(JSONValue.self, from: body, keepingAtMost: limit, ofArrayAt: path) {
            return tree
        }
        return try decode(JSONValue.self, from: body).keepingAtMost(limit, ofListAt: path[...])
    }

    /// Decodes `T`, turning `DecodingError` into ``SourceError/undecodable(path:reason:)``.
    public func decode<T: Decodable>(_ type: T.Type, from body: Data) throws -> T {
        // The tape decodes what it is sure to read as Foundation would; errors and
        // anything unusual go to Foundation, whose verdict and words stand.
        if usesTape, case .decoded(let value) = TapeDecoding.decode(type, from: body) { return value }
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch let error as DecodingError {
            let raw = try? JSONDecoder().decode(JSONValue.self, from: body)
            guard let raw else {
                // JSON but for bytes that are not UTF-8 is a different fault from an HTML page.
                let repaired = Data(String(decoding: body, as: UTF8.self).utf8)
                let onlyEncoding = String(data: body, encoding: .utf8) == nil
                    && (try? JSONDecoder().decode(JSONValue.self, from: repaired)) != nil
                let reason = onlyEncoding
                    ? "the body is not UTF-8 text (\(body.count) bytes)" : "the body is not JSON (\(body.count) bytes)"
                throw SourceError.undecodable(path: "", reason: reason)
            }
            let problem = DecodingProblem(error, in: raw)
            throw SourceError.undecodable(path: problem.path, reason: problem.reason)
        }
    }
}

/// The tape decoder builds a whole `JSONValue` node by node.
extension JSONValue: TapeTree {
    public init(node: TapeNode<JSONValue>) {
        switch node {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .number(let value): self = .number(value)
        case .string(let value): self = .string(value)
        case .array(let items): self = .array(items)
        case .object(let members): self = .object(members)
        }
    }
}

extension JSONValue {
    /// This value with the list at the object keys `path` cut to its first `limit` items.
    package func keepingAtMost(_ limit: Int, ofListAt path: ArraySlice<String>) -> JSONValue {
        switch self {
        case .array(let items) where path.isEmpty:
            return .array(Array(items.prefix(limit)))
        case .object(var members):
            guard let name = path.first, let member = members[name] else { return self }
            members[name] = member.keepingAtMost(limit, ofListAt: path.dropFirst())
            return .object(members)
        default:
            return self
        }
    }
}
