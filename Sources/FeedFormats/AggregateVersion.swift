/// The version printed by `aggregate --version` and sent in `User-Agent`.
public enum AggregateVersion {
    public static let current = "0.1.0"
}
