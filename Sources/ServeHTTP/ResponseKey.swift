import HummingbirdCore

/// The same answer for the same request: the host (a feed names its own URL), the path,
/// and the query's parameters in any order.
package enum ResponseKey {
    /// The key of a request for `target` (its path and query, as sent) at `authority`.
    package static func of(authority: String?, target: String) -> String {
        // One parameter or none has one order: the key is the target as it came.
        guard let query = target.utf8.firstIndex(of: UInt8(ascii: "?")), target.utf8[query...].contains(UInt8(ascii: "&")) else {
            return (authority ?? "") + target
        }
        let uri = URI(target)
        let parameters = uri.queryParameters.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "&")
        return "\(authority ?? "")\(uri.path)?\(parameters)"
    }
}
