import ServeAccess
import ServeHTTP
import FeedConfig
import FeedCore
import Foundation
import GoogleReaderModel
import HTTPTypes
import Hummingbird

/// Subscribing and unsubscribing through the Google Reader API: `subscription/quickadd`
/// and `subscription/edit` change Sources.yml through the same validated whole-file edit
/// as `aggregate add` and `import` (``Reconfiguration``), and `serve` then serves the file.
extension FeedRoutes {
    /// Behind the admin role (``register(on:)``): these change the file every person reads.
    func registerSubscribing(on router: RouterGroup<ServeRequestContext>) {
        let api = GoogleReader.prefix + "/reader/api/0"
        router.post(RouterPath(api + "/subscription/quickadd")) { request, context in
            await self.api(request, context) { try await self.quickAdd($0, servedAt: request.head.authority) }
        }
        router.post(RouterPath(api + "/subscription/edit")) { request, context in
            await self.api(request, context) { try await self.editSubscription($0, servedAt: request.head.authority) }
        }
    }

    /// The answer to `quickadd`: what was asked, and the subscription (`numResults` 1, also
    /// when it was already there) or why there is none (0, as FreshRSS and Inoreader say).
    struct QuickAdd: Encodable {
        var query: String
        var numResults: Int
        var streamId: String?
        var streamName: String?
        var error: String?
    }

    /// `quicksub`: a feed's or its page's URL, bare or as `feed/URL`.
    private func quickAdd(_ form: FormFields, servedAt: String?) async throws(APIError) -> Response {
        let query = form.get("quicksub") ?? form.get("quickadd") ?? ""
        guard let address = Self.webAddress(query) else {
            return Self.json(QuickAdd(query: query, numResults: 0, error: "\"\(query)\" is not a web address: give a feed's or its page's http:// or https:// URL"))
        }
        do {
            let (id, name) = try await reconfiguration.subscribe(address, title: nil, folders: [], servedAt: servedAt)
            return Self.json(QuickAdd(query: query, numResults: 1, streamId: "feed/" + id, streamName: name))
        } catch {
            if case .notFetched = error { return Self.json(QuickAdd(query: query, numResults: 0, error: error.description)) }
            throw Self.apiError(error)
        }
    }

    /// `ac=subscribe` (`s=feed/URL`, `t` its name, `a=user/-/label/X` its folder),
    /// `ac=unsubscribe` (`s=feed/ID` or `feed/URL`, repeatable), `ac=edit` (`t` renames,
    /// `a`/`r` add and remove folders). Answers `OK`.
    private func editSubscription(_ form: FormFields, servedAt: String?) async throws(APIError) -> Response {
        let streams = form.getAll("s")
        guard !streams.isEmpty else { throw APIError(status: .badRequest, text: "s: name the subscription (feed/ID or feed/URL)") }
        let title = form.get("t").flatMap { $0.isEmpty ? nil : $0 }
        let add = form.getAll("a").compactMap(Self.folder), remove = form.getAll("r").compactMap(Self.folder)
        do {
            switch form.get("ac") {
            case "subscribe":
                for stream in streams {
                    guard let address = Self.webAddress(stream) else {
                        throw APIError(status: .badRequest, text: "s: \(stream) is not feed/ and a web address")
                    }
                    _ = try await reconfiguration.subscribe(address, title: title, folders: add, servedAt: servedAt)
                }
            case "unsubscribe":
                for stream in streams { try await reconfiguration.unsubscribe(try configuredID(stream)) }
            case "edit":
                for stream in streams { try await reconfiguration.edit(try configuredID(stream), title: title, folders: (add, remove)) }
            default:
                throw APIError(status: .badRequest, text: "ac: subscribe, unsubscribe or edit")
            }
        } catch let error as Reconfiguration.EditFailure {
            throw Self.apiError(error)
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError(status: .internalServerError, text: "\(error)")
        }
        return Self.text("OK")
    }

    /// The id of the source `stream` names: `feed/ID`, or `feed/URL` of a configured source.
    private func configuredID(_ stream: String) throws(APIError) -> String {
        let config = self.config
        if case .feed(let id)? = GoogleReader.Stream(stream), config.source(id: id) != nil { return id }
        if let address = Self.webAddress(stream), let id = SourcesFile.configuredID(for: address, in: config) { return id }
        throw APIError(status: .notFound, text: "s: no subscription is \(stream)")
    }

    /// `feed/https://…` or `https://…` as a web address.
    static func webAddress(_ text: String) -> URL? {
        let bare = text.hasPrefix("feed/") ? String(text.dropFirst(5)) : text
        guard let url = URL(string: bare), url.isWebAddress else { return nil }
        return url
    }

    /// `user/-/label/Tech` → `Tech`.
    static func folder(_ stream: String) -> String? {
        if case .label(let name)? = GoogleReader.Stream(stream) { return name }
        return nil
    }

    static func apiError(_ failure: Reconfiguration.EditFailure) -> APIError {
        switch failure {
        case .unavailable(let why): APIError(status: .serviceUnavailable, text: why)
        case .refused(let why): APIError(status: .notFound, text: why)
        case .notFetched: APIError(status: .badGateway, text: Reconfiguration.EditFailure.notFetchedText)
        case .file(let failure): APIError(status: failure.isUsage ? .conflict : .internalServerError, text: failure.description)
        }
    }
}
