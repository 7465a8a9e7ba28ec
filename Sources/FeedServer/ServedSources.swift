import ServeAccess
import ServeHTTP
import FeedConfig
import FeedSupport
import FeedCore
import FeedEngine
import Foundation
import GoogleReaderModel
import ReaderPages
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
    /// Each source's folder (its first OPML folder, kept as a tag): the reader groups its
    /// source list by them.
    let folders: [String: String]

    init(config: FeedConfig, runner: FeedRunner) {
        self.config = config
        self.runner = runner
        catalog = GoogleReader.Catalog(config, registry: runner.registry)
        unselectedSources = ReaderPage.sourceOptions(config, selected: [])
        folders = Dictionary(catalog.entries.compactMap { entry in entry.subscription.categories.first.map { (entry.source.id, $0.label) } },
                             uniquingKeysWith: { first, _ in first })
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

/// Changes what `serve` serves while it runs: a new configuration swapped in (a reload of
/// Sources.yml), and the file's edits the Google Reader API makes (subscribe,
/// unsubscribe, rename), each through the validated whole-file edit `aggregate import`
/// uses, then reloaded.
final class Reconfiguration: Sendable {
    typealias Replan = (plan: SourceRefresher.Plan, unchanged: Set<String>)

    let current: CurrentSources
    let status: ConfigStatus
    /// The file, its loader, and what subscribing fetches with (nil: the configuration
    /// was not read from a file this server may change).
    let file: ConfigReload?
    /// Where this server is reached (`host:port`, from `--base-url`): never subscribed to.
    private let ownAuthorities: Set<String>
    private let refreshed: RefreshedSources?
    private let health: SourceHealth
    private let versions: SourceVersions
    private let responses: any RenderedResponseCache
    /// The runners of a configuration: the readers' and the refresher's plan.
    private let makeServed: @Sendable (FeedConfig) -> (ServedSources, SourceRefresher.Plan?)
    /// Sends the refresher each new configuration's plan.
    private let replans: AsyncStream<Replan>.Continuation
    private let say: @Sendable (String) -> Void
    /// One edit of the file at a time (read, change, check, rename).
    private let editing = Mutex(())

    init(served: ServedSources, file: ConfigReload?, ownAuthorities: Set<String> = [], refreshed: RefreshedSources?, health: SourceHealth, versions: SourceVersions,
         responses: any RenderedResponseCache, replans: AsyncStream<Replan>.Continuation,
         say: @escaping @Sendable (String) -> Void, makeServed: @escaping @Sendable (FeedConfig) -> (ServedSources, SourceRefresher.Plan?)) {
        current = CurrentSources(served)
        status = ConfigStatus(bytes: file.flatMap { FileManager.default.contents(atPath: $0.path) })
        self.file = file
        self.ownAuthorities = ownAuthorities
        self.refreshed = refreshed
        self.health = health
        self.versions = versions
        self.responses = responses
        self.replans = replans
        self.say = say
        self.makeServed = makeServed
    }

    /// Serves `config` from now on: every source whose settings are unchanged keeps its
    /// refresh, its health and what the store holds of it; the others stop or start.
    /// Every kept response is retired when anything changed (a page of every source, the
    /// reader's source list and the feeds' titles read the whole configuration).
    func reload(to config: FeedConfig) async -> ConfigChanges {
        let (served, plan) = makeServed(config)
        let old = current.replace(with: served).config
        let changes = old.changes(to: config)
        let enabled = config.sources.filter(\.enabled).map(\.id)
        refreshed?.cover(enabled)
        await health.forget(old.sources.map(\.id).filter { !enabled.contains($0) })
        if !changes.isEmpty || old.feed != config.feed {
            versions.bump(SourceVersions.configuration)
            await responses.invalidate(source: SourceVersions.configuration)
        }
        if let plan { replans.yield((plan, Set(changes.unchanged))) }
        if old.state != config.state {
            say("aggregate: \(config.file): state: changed; serve keeps using \(old.state?.description ?? "the default state") until it restarts")
        }
        return changes
    }

    /// Reads the file again and serves it, or keeps the running configuration and says
    /// why (stderr, `/healthz`) when it does not load.
    func reloadFile(after reason: String) async {
        guard let file else { return }
        let bytes = FileManager.default.contents(atPath: file.path)
        let config: FeedConfig
        do {
            config = try file.loader.load(path: file.path)
        } catch {
            status.failed(error.description, bytes)
            say("aggregate: \(file.path) no longer loads (after \(reason)), so serve keeps the configuration it has until the file is fixed:\n\(error.description)")
            return
        }
        let changes = await reload(to: config)
        status.loaded(bytes)
        say("aggregate: reloaded \(config.file) after \(reason): \(changes)")
    }

    /// Why the file was not changed.
    enum EditFailure: Error, CustomStringConvertible {
        /// Not a file this server may change, or no feed plugin, or offline.
        case unavailable(String)
        /// The request names nothing that can be done (a source that is not there).
        case refused(String)
        case file(SourcesFile.Failure)
        /// No feed was fetched: the address is not public, is this server, did not answer,
        /// or answered no feed. One answer for all, so that a subscription cannot be used
        /// to map what answers where; the server's log says which.
        case notFetched

        var description: String {
            switch self {
            case .unavailable(let why), .refused(let why): why
            case .file(let failure): failure.description
            case .notFetched: Self.notFetchedText
            }
        }

        static let notFetchedText = "no feed that this server may subscribe to was found at that address"
    }

    /// The file as it is now, to be changed under ``editing``.
    private func sourcesFile() throws(EditFailure) -> SourcesFile {
        guard let file else { throw .unavailable("serve was not started from a Sources.yml it can change") }
        do {
            return SourcesFile(path: file.path, config: try file.loader.load(path: file.path), loader: file.loader)
        } catch {
            throw .unavailable("\(file.path) does not load now, so it is not changed:\n\(error.description)")
        }
    }

    /// Subscribes to the feed at `address` (or the one its page advertises first): a new
    /// `plugin: feed` entry at the end of the file, named `title` or the feed's own title,
    /// in `folders`. A URL already configured adds nothing. Returns the source's id and name.
    /// `servedAt`: the authority the request reached this server at (never subscribed to).
    func subscribe(_ address: URL, title: String?, folders: [String], servedAt: String?) async throws(EditFailure) -> (id: String, name: String) {
        let config = current.served.config
        let own = ownAuthorities.union(servedAt.map { [Self.authority(of: $0)] } ?? [])
        if own.contains(Self.authority(of: address)) {
            say("aggregate: a subscribe to \(address.redactedString) was refused: it is this server")
            throw .notFetched
        }
        let registry = current.served.runner.registry
        if let existing = SourcesFile.configuredID(for: address, in: config) { return (existing, config.sourceName(existing)) }
        guard let plugin = registry.types.lazy.compactMap({ $0 as? any SubscribableSource.Type }).first else {
            throw .unavailable("this build has no feed plugin")
        }
        guard let http = file?.http else { throw .unavailable("serve runs offline: it fetches no feed to subscribe to") }
        let found: FeedFinder.Found
        do {
            found = try await FeedFinder(plugin: plugin, http: http).find(address) { feeds, _ in feeds[0] }
        } catch {
            say("aggregate: a subscribe to \(address.redactedString) found no feed: \(PlainWords.describe(error))")
            throw .notFetched
        }
        if own.contains(Self.authority(of: found.url)) {
            say("aggregate: a subscribe to \(address.redactedString) was refused: its feed is on this server")
            throw .notFetched
        }
        let added: (id: String, name: String, new: Bool) = try editing.withLock { _ throws(EditFailure) in
            let sources = try sourcesFile()
            if let existing = sources.configuredID(for: found.url) { return (existing, sources.config.sourceName(existing), false) }
            let name = title ?? found.title
            let id = SourcesFileEdit.id(from: name ?? found.url.host ?? "feed", taken: Set(sources.config.sources.map(\.id)))
            let entry = NewSourceEntry(id: id, name: name, plugin: plugin.plugin, url: found.url, tags: folders,
                                       comment: "subscribed through the Google Reader API")
            do throws(SourcesFile.Failure) { try sources.add([entry]) } catch { throw .file(error) }
            return (id, entry.name ?? id, true)
        }
        if added.new { await reloadFile(after: "a subscribe through the Google Reader API") }
        return (added.id, added.name)
    }

    /// `host:port` of a URL, lowercased, with its scheme's default port.
    static func authority(of url: URL) -> String {
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        return "\((url.host ?? "").lowercased()):\(port)"
    }

    /// `host:port` of a request's `Host` (`example.org` is port 80).
    static func authority(of hostHeader: String) -> String {
        URL(string: "http://" + hostHeader).map { authority(of: $0) } ?? hostHeader.lowercased()
    }

    /// Removes the source `id` from the file, when its entry is one the writer could have
    /// written: a hand-written entry with other settings (headers, a secret, `exec`) is
    /// the file owner's to remove.
    func unsubscribe(_ id: String) async throws(EditFailure) {
        try editing.withLock { _ throws(EditFailure) in
            let sources = try sourcesFile()
            guard sources.config.source(id: id) != nil else { throw .refused("no source has the id \(id)") }
            do throws(SourcesFile.Failure) { try sources.change(id, to: nil, onlyWritten: true) } catch { throw .file(error) }
        }
        await reloadFile(after: "an unsubscribe through the Google Reader API")
    }

    /// Renames the source `id` and moves it to `folders` (nil keeps either), when its entry
    /// is one the writer could have written (id, name, plugin, url, tags).
    func edit(_ id: String, title: String?, folders: (add: [String], remove: [String])) async throws(EditFailure) {
        try editing.withLock { _ throws(EditFailure) in
            let sources = try sourcesFile()
            guard let source = sources.config.source(id: id) else { throw .refused("no source has the id \(id)") }
            let tags = (source.options.map(SourcesFileEdit.tags) ?? []).filter { !folders.remove.contains($0) }
            let entry = NewSourceEntry(id: id, name: title ?? source.name, plugin: source.plugin, url: source.url,
                                       tags: tags + folders.add.filter { !tags.contains($0) })
            do throws(SourcesFile.Failure) { try sources.change(id, to: entry) } catch { throw .file(error) }
        }
        await reloadFile(after: "an edit of a subscription through the Google Reader API")
    }
}
