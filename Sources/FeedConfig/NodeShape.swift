import FeedCore

/// A YAML document's values without their positions, for "is this what was meant".
indirect enum NodeShape: Equatable {
    case scalar(String, ConfigScalar.Kind)
    case list([NodeShape])
    case map([Pair])

    struct Pair: Equatable {
        var key: String
        var value: NodeShape
    }

    init(_ node: ConfigNode) {
        switch node.value {
        case .scalar(let scalar): self = .scalar(scalar.text, scalar.kind)
        case .list(let items): self = .list(items.map(NodeShape.init))
        case .map(let entries): self = .map(entries.map { Pair(key: $0.key, value: NodeShape($0.value)) })
        }
    }
}

/// What a source's settings are, as written, for telling whether a reloaded Sources.yml
/// changed them: its entry and the top-level keys that apply to every source, compared
/// without their lines (an entry moved down by an edit above it is unchanged).
public struct SourceDefinition: Sendable, Equatable {
    private let entry: NodeShape
    private let everySource: [NodeShape?]

    init(entry: ConfigNode, everySource: [ConfigNode?]) {
        self.entry = NodeShape(entry)
        self.everySource = everySource.map { $0.map(NodeShape.init) }
    }
}
