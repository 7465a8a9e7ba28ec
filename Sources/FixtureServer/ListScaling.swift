import FeedCore
import Foundation
import Synchronization

/// `fixture-server --scale N`: every list of records in an answer replicated N-fold, for
/// the benchmarks. Replica k (from 1; replica 0 is the recording) gets distinct ids
/// (`"<id>-k"`, or `id + k × 1,000,000` for numbers; the same suffix in every list of a
/// body, so references between records still hold) and distinct prices (`+ k` minor
/// units). The lists are the arrays of objects directly under the body (or the body
/// itself), which is where every recorded upstream keeps its records.
public final class ListScaling: Sendable {
    public let factor: Int
    /// Scaled bodies by route and request, so the server spends its time serving.
    private let memo = Mutex<[String: Data]>([:])

    public init(factor: Int) {
        self.factor = max(1, factor)
    }

    func apply(to body: Data, key: String) -> Data {
        guard factor > 1 else { return body }
        if let known = memo.withLock({ $0[key] }) { return known }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: body) else { return body }
        let scaled: JSONValue
        switch value {
        case .array(let records): scaled = .array(replicate(records))
        case .object(let members): scaled = .object(members.mapValues { member in
            if case .array(let records) = member { return .array(replicate(records)) }
            return member
        })
        default: return body
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(scaled)) ?? body
        memo.withLock { $0[key] = data }
        return data
    }

    private func replicate(_ records: [JSONValue]) -> [JSONValue] {
        guard records.contains(where: { if case .object = $0 { true } else { false } }) else { return records }
        return records + (1..<factor).flatMap { replica in records.map { Self.rewrite($0, replica: replica, key: nil) } }
    }

    static func rewrite(_ value: JSONValue, replica: Int, key: String?) -> JSONValue {
        switch value {
        case .object(let members):
            return .object(Dictionary(uniqueKeysWithValues: members.map { ($0.key, rewrite($0.value, replica: replica, key: $0.key)) }))
        case .string(let text) where key.map(isIdentifier) == true:
            return .string("\(text)-\(replica)")
        case .number(let number) where key.map(isIdentifier) == true:
            return .number(number + Decimal(replica * 1_000_000))
        case .number(let number) where key.map(isPrice) == true:
            let whole = number == number.rounded(scale: 0)
            return .number(number + (whole ? Decimal(replica) : Decimal(replica) / 100))
        default:
            return value
        }
    }

    static func isIdentifier(_ key: String) -> Bool {
        let lower = key.lowercased()
        return lower == "id" || lower == "code" || lower.hasSuffix("_id") || key.hasSuffix("Id")
    }

    static func isPrice(_ key: String) -> Bool {
        let lower = key.lowercased()
        return ["price", "amount", "cents", "now", "was"].contains { lower.contains($0) }
    }
}

private extension Decimal {
    func rounded(scale: Int) -> Decimal {
        var value = self
        var result = Decimal()
        NSDecimalRound(&result, &value, scale, .down)
        return result
    }
}
