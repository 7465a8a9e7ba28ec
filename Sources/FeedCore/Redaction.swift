import Foundation

/// What is secret in what we print and store.
public enum Redaction {
    /// Whether a query parameter of this name carries a secret (`api_key`, `token`, …).
    public static func isSecretParameter(_ name: String) -> Bool {
        URL.secretQueryNames.contains(name.lowercased())
    }
}

extension URL {
    /// Query parameter names whose values are secrets and never printed.
    static let secretQueryNames: Set<String> = [
        "key", "apikey", "api_key", "api-key", "token", "access_token", "auth", "secret",
        "password", "pass", "signature", "sig", "client_secret",
    ]

    /// The URL for people and logs: a password in the user info and the values of
    /// secret-looking query parameters are replaced by `REDACTED`.
    public var redactedString: String {
        guard var parts = URLComponents(url: self, resolvingAgainstBaseURL: false) else { return absoluteString }
        if parts.password != nil { parts.password = "REDACTED" }
        parts.percentEncodedQueryItems = parts.percentEncodedQueryItems?.map { item in
            URL.secretQueryNames.contains(item.name.lowercased()) && item.value != nil
                ? URLQueryItem(name: item.name, value: "REDACTED") : item
        }
        return parts.string ?? absoluteString
    }
}
