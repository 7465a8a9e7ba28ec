import FeedCore
import FeedSupport
import FeedEngine
import FixtureKit
import Foundation
import FixtureServer
import Testing

/// The contract every source keeps, checked on its recorded data through the real
/// fixture server on 127.0.0.1: decoding and mapping, card invariants, paging, detail,
/// hostile bodies and option validation. Call ``check(_:)`` from a source's tests; the
/// `Conformance` suite runs it over every catalogue entry.
public enum Conformance {
    /// Runs every check on `source`, recording a test issue for each broken rule.
    public static func check(_ source: any BuiltinSource.Type) async throws {
        let world = ConformanceWorld(source: source)
        try await world.run { context in
            try await checkRecordedPages(context)
            try await checkDetail(context)
            try await checkRepeatedCursor(context)
            try await checkHostileBodies(context)
            try checkOptions(context)
        }
    }

    // MARK: - Recorded pages

    static func checkRecordedPages(_ context: ConformanceContext) async throws {
        let first = try await context.walk()
        let second = try await context.walk()
        let cards = first.cards
        #expect(!cards.isEmpty, "\(context.name): the recorded pages give no card")
        #expect(first.pages <= context.config.maxPages, "\(context.name): the walk did not stop within max_pages")
        #expect(Set(cards.map(\.id)).count == cards.count, "\(context.name): card ids repeat: \(duplicates(cards.map(\.id)))")
        #expect(second.cards == cards, "\(context.name): two walks over the same recorded data give different cards")
        for card in cards {
            for problem in CardRules.problems(card, source: context.config.id) {
                Issue.record("\(context.name): \(card.id): \(problem)")
            }
        }
    }

    static func duplicates(_ ids: [String]) -> [String] {
        Dictionary(grouping: ids, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
    }

    // MARK: - Detail

    static func checkDetail(_ context: ConformanceContext) async throws {
        guard let first = try await context.walk().cards.first else { return }
        let source = try context.makeSource()
        do {
            let card = try await source.detail(id: first.upstreamID)
            #expect(card.id == first.id, "\(context.name): detail(\(first.upstreamID)) answered with \(card.id)")
            for problem in CardRules.problems(card, source: context.config.id) {
                Issue.record("\(context.name): detail \(card.id): \(problem)")
            }
        } catch SourceError.noDetail, SourceError.noDetailEndpoint {
            // Documented: no detail endpoint, or no detail for this item; the engine shows the list card.
        }
        for id in ["conformance-no-such-id", "../../etc/passwd?x=1#y"] {
            do {
                let card = try await source.detail(id: id)
                Issue.record("\(context.name): detail(\"\(id)\") should be notFound, got card \(card.id)")
            } catch SourceError.notFound, SourceError.noDetail, SourceError.noDetailEndpoint {
                // notFound, or no detail endpoint at all: both are the documented answers.
            } catch {
                Issue.record("\(context.name): detail(\"\(id)\") threw \(error), expected SourceError.notFound")
            }
        }
        for request in context.requests() {
            #expect(!request.path.contains("/.."), "\(context.name): an id reached the upstream unencoded: \(request.path)")
        }
    }

    // MARK: - Paging

    /// A page that comes back with the same body: a source whose cursor comes from the
    /// body hands out the same cursor again and the walk must fail with `repeatedCursor`;
    /// one that counts by itself just moves on. Either way the walk ends by itself.
    static func checkRepeatedCursor(_ context: ConformanceContext) async throws {
        let source = try context.makeSource()
        let firstPage = try await source.page(after: nil)
        guard firstPage.next != nil, let body = context.lastBody else { return }
        context.setFaults([.none, Fault(body: String(decoding: body, as: UTF8.self)), .none])
        let budget = context.config.maxPages + 2
        do {
            let walk = try await context.walk(budget: budget)
            #expect(walk.pages < budget, "\(context.name): a repeated page did not stop the walk (\(walk.pages) pages)")
        } catch SourceError.repeatedCursor {
            // The documented end of a looping upstream.
        }
        context.setFaults([])
    }

    // MARK: - Hostile bodies

    static func checkHostileBodies(_ context: ConformanceContext) async throws {
        guard let recorded = try await context.firstBody() else { return }
        var cases: [(String, Fault)] = [
            ("malformed JSON", Fault(malformedJSON: true)),
            ("an empty body", Fault(body: "")),
            ("[] instead of an object", Fault(body: "[]")),
            ("an HTML error page", Fault(body: "<html><body>Service Unavailable</body></html>")),
        ]
        if let mangled = HostileJSON.wrongTypes(recorded) {
            cases.append(("records with wrong types", Fault(body: String(decoding: mangled, as: UTF8.self))))
        }
        for (name, fault) in cases {
            context.setFaults([fault])
            let source = try context.makeSource()
            do {
                let page = try await source.page(after: nil)
                let empty = page.cards.isEmpty && page.skipped.isEmpty
                #expect(!empty, "\(context.name): \(name) gave a silent empty page")
                #expect(page.skipped.allSatisfy { !$0.path.isEmpty }, "\(context.name): \(name): a skipped record has no JSON path")
                if name == "records with wrong types" {
                    #expect(!page.skipped.isEmpty, "\(context.name): \(name): no record was skipped")
                }
            } catch is SourceError {
                // A typed failure is the right answer to a body the source cannot read.
            } catch {
                Issue.record("\(context.name): \(name) threw \(type(of: error)) (\(error)), expected a SourceError")
            }
        }
        context.setFaults([])
    }

    // MARK: - Options

    /// An unknown option is rejected at its line and column, with no request sent.
    static func checkOptions(_ context: ConformanceContext) throws {
        let location = ConfigLocation(file: "Sources.yml", line: 99, column: 7)
        var settings = context.config.settings
        let extra = ConfigEntry(key: "conformance_unknown_option", keyLocation: location,
                                value: ConfigNode(.scalar(ConfigScalar(text: "1", kind: .integer)), at: location))
        if case .map(let entries)? = settings.options?.value {
            settings.options = ConfigNode(.map(entries + [extra]), at: settings.options?.location ?? location)
        } else {
            settings.options = ConfigNode(.map([extra]), at: location)
        }
        let counter = CountingTransport()
        do {
            _ = try context.source.init(settings: settings, http: counter)
            Issue.record("\(context.name): an unknown option was accepted")
        } catch let issues as ConfigIssues {
            let issue = issues.issues.first { $0.location == location }
            #expect(issue?.message.hasPrefix("unknown key") == true,
                    "\(context.name): the unknown option was not reported at \(location): \(issues)")
        }
        #expect(counter.count == 0, "\(context.name): init sent \(counter.count) request(s)")
    }

    /// The options `source` accepts, as it reports them for an unknown key.
    public static func acceptedOptions(_ source: any BuiltinSource.Type) -> [String] {
        let location = ConfigLocation(file: "Sources.yml", line: 1, column: 1)
        let probe = ConfigEntry(key: "conformance_unknown_option", keyLocation: location,
                                value: ConfigNode(.scalar(ConfigScalar(text: "1", kind: .integer)), at: location))
        let settings = SourceSettings(id: "probe", url: URL(string: "http://127.0.0.1:9/")!,
                                      options: ConfigNode(.map([probe]), at: location), environment: [:], json: JSONBody.tape)
        do {
            _ = try source.init(settings: settings, http: CountingTransport())
        } catch let issues as ConfigIssues {
            return issues.issues.compactMap(\.allowedKeys).first ?? []
        } catch {}
        return []
    }
}

/// Counts requests and answers none: for checking that `init` does no I/O.
final class CountingTransport: HTTPTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var sent = 0

    var count: Int { lock.withLock { sent } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        lock.withLock { sent += 1 }
        throw SourceError.transport(.noNetwork)
    }
}
