import FeedCore

/// The top-level `defaults:` of Sources.yml: what every source without its own takes, so
/// sixty imported feeds share one `refresh:` instead of each polling at its cache TTL.
///
/// ```yaml
/// defaults:
///   refresh: 1h       # serve's background refresh of each source
///   cache_ttl: 30m
/// ```
struct SourceDefaults {
    var refresh: Double?
    var cacheTTL: Double?
    var timeout: Double?
    var fallback: FallbackPolicy?
    var record: Bool?

    static let refreshRange: ClosedRange<Double> = 1...86_400
    static let keys = ["refresh", "cache_ttl", "timeout", "fallback", "record"]

    static func read(in top: ConfigMapReader) -> SourceDefaults {
        guard let block = top.map("defaults") else { return SourceDefaults() }
        block.rejectUnknownKeys(keys)
        let limits = SourceConfig.Limits.self
        return SourceDefaults(
            refresh: block.seconds("refresh", in: refreshRange),
            cacheTTL: block.seconds("cache_ttl", in: limits.cacheTTL),
            timeout: block.seconds("timeout", in: limits.timeout),
            fallback: block.choice("fallback", from: FallbackPolicy.allCases.map(\.rawValue)).flatMap(FallbackPolicy.init(rawValue:)),
            record: block.boolean("record"))
    }
}
