import FeedCore
import FeedSourceTesting
import FeedSupport
import FixtureKit
import Foundation
import Testing

/// Sources that break one rule each: the suite must catch every one, or it proves nothing.
@Suite struct TheSuiteCatchesBrokenSources {
    @Test func aSourceThatSwallowsABadBodyIsCaught() async throws {
        await withKnownIssue("a silent empty page for a body it cannot read") {
            try await FeedSourceTesting.Conformance.check(SilentSource.self)
        }
    }

    @Test func aSourceThatAcceptsAnyOptionIsCaught() async throws {
        await withKnownIssue("an unknown option accepted") {
            try await FeedSourceTesting.Conformance.check(PermissiveSource.self)
        }
    }
}

/// Three items at `/broken/items`, as `{"items": [{"id", "title"}]}`.
struct BrokenFixture: FixtureUpstream {
    let name = "broken"

    func respond(to request: FixtureRequest) -> FixtureResponse? {
        guard request.path == "/items" else { return nil }
        return .json(JSONValue.object(["items": .array((1...3).map { .object(["id": .string("\($0)"), "title": .string("Item \($0)")]) })]))
    }
}

struct BrokenItems: Decodable {
    struct Item: Decodable {
        var id: String
        var title: String
    }

    var items: LenientList<Item>
}

/// Breaks "never a silent empty list": a body it cannot decode becomes an empty page.
struct SilentSource: BuiltinSource {
    static let plugin = "silent"
    static let snapshots: [RecordedResponse] = []
    static let fixtureSources = [FixtureSourceEntry(id: "silent", plugin: plugin, path: "/broken", route: "broken")]
    static func fixture(_ options: FixtureOptions) -> any FixtureUpstream { BrokenFixture() }

    let settings: SourceSettings
    let http: any HTTPTransport

    init(settings: SourceSettings, http: any HTTPTransport) throws {
        try settings.optionsReader().finish(allowedKeys: [])
        self.settings = settings
        self.http = http
    }

    func page(after cursor: String?) async throws -> SourcePage {
        let response = try await http.get(settings.url.appendingPathComponent("items"))
        guard let list = try? JSONDecoder().decode(BrokenItems.self, from: response.body) else { return SourcePage(cards: []) }
        return SourcePage(cards: list.items.elements.map { Card(source: settings.id, upstreamID: $0.id, kind: .item, title: $0.title) },
                          skipped: list.items.skipped)
    }
}

/// Breaks "init rejects unknown options": it never looks at them.
struct PermissiveSource: BuiltinSource {
    static let plugin = "permissive"
    static let snapshots: [RecordedResponse] = []
    static let fixtureSources = [FixtureSourceEntry(id: "permissive", plugin: plugin, path: "/broken", route: "broken")]
    static func fixture(_ options: FixtureOptions) -> any FixtureUpstream { BrokenFixture() }

    let settings: SourceSettings
    let http: any HTTPTransport

    init(settings: SourceSettings, http: any HTTPTransport) throws {
        self.settings = settings
        self.http = http
    }

    func page(after cursor: String?) async throws -> SourcePage {
        let list = try await http.getJSON(BrokenItems.self, from: settings.url.appendingPathComponent("items"), with: settings.json)
        return SourcePage(cards: list.items.elements.map { Card(source: settings.id, upstreamID: $0.id, kind: .item, title: $0.title) },
                          skipped: list.items.skipped)
    }
}
