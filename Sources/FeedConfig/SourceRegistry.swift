import FeedCore

/// The source modules this binary knows, by plugin name. The composition root builds
/// it from one array; the engine never imports a source module.
public struct SourceRegistry: Sendable {
    public let types: [any FeedSource.Type]

    public init(_ types: [any FeedSource.Type]) {
        self.types = types
    }

    public func type(for plugin: String) -> (any FeedSource.Type)? {
        types.first { $0.plugin == plugin }
    }

    /// Sorted plugin names, for messages.
    public var pluginNames: [String] { types.map { $0.plugin }.sorted() }
}
