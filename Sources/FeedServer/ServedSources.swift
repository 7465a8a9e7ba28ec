import FeedConfig
import FeedEngine
import Synchronization

/// One Sources.yml as `serve` answers it: the configuration, the readers' runner on it,
/// and what is made once per configuration (the Google Reader API's subscriptions, the
/// reader's source list). A reload makes a new one and swaps it in whole; a request that
/// began on the old one finishes on it.
final class ServedSources: Sendable {
    let config: FeedConfig
    /// Answers readers' runs (any cached copy will do).
    let runner: FeedRunner
    /// The sources as the Google Reader API lists them.
    let catalog: GoogleReader.Catalog
    /// The reader's source filter with nothing selected, rendered once (``ReaderPage/sourceOptions(_:selected:)``).
    let unselectedSources: String

    init(config: FeedConfig, runner: FeedRunner) {
        self.config = config
        self.runner = runner
        catalog = GoogleReader.Catalog(config, registry: runner.registry)
        unselectedSources = ReaderPage.sourceOptions(config, selected: [])
    }
}

/// The configuration served now, swapped whole by a reload.
final class CurrentSources: Sendable {
    private let current: Mutex<ServedSources>

    init(_ served: ServedSources) {
        current = Mutex(served)
    }

    var served: ServedSources { current.withLock { $0 } }

    /// Serves `new` from now on; returns the configuration it replaces.
    func replace(with new: ServedSources) -> ServedSources {
        current.withLock { current in
            let old = current
            current = new
            return old
        }
    }
}
