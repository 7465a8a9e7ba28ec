import Foundation
import Logging

/// Diagnostics for people: each message is one plain line on stderr (the engine
/// already prefixes the source id), with no timestamps or levels.
struct StderrLogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        Terminal.writeError("\(event.message)")
    }
}
