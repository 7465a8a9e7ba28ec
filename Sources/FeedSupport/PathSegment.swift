import FeedCore
import Foundation

/// Upstream ids placed into URL paths.
public enum PathSegment {
    /// Letters, digits, `-`, `_` and `~` only: `/`, `?`, `#`, `%` and `.` are encoded, so
    /// an id like `../../admin` stays one segment and can never climb out of its path.
    public static func encode(_ id: String) -> String {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_~")
        return id.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
