/// The files of a new source module. `__Name__` and `__id__` are replaced by the module
/// name and the source id; the paging-specific parts come from ``Paging``.
struct Template {
    let name: String
    let id: String
    let paging: Paging

    static let exampleItems = [
        #"{"id": "1", "title": "First example item", "price": 12.5, "url": "https://example.com/__id__/items/1", "image": "https://example.com/__id__/images/1.jpg", "published": "2026-01-05T10:00:00Z"}"#,
        #"{"id": "2", "title": "Second example item", "price": "7.10", "url": "https://example.com/__id__/items/2", "published": "2026-01-04T09:30:00Z"}"#,
        #"{"id": "3", "title": "Third example item", "price": null, "url": "https://example.com/__id__/items/3"}"#,
        #"{"id": "4", "title": "Fourth example item", "price": 100, "image": "https://example.com/__id__/images/4.jpg"}"#,
        #"{"id": "5", "title": "Fifth example item", "price": 0.99, "published": "2026-01-01T00:00:00Z"}"#,
    ]

    /// Recorded pages: snapshot file name, upstream URL suffix and body.
    var pages: [(file: String, suffix: String, body: String)] {
        paging.recordedPages(items: Self.exampleItems).enumerated().map { index, page in
            ("items_page\(index + 1).json", page.suffix, page.body + "\n")
        }
    }

    var files: [(String, String)] {
        let list: [(String, String)] = [
            ("\(name)Source.swift", source),
            ("\(name)Wire.swift", wire),
            ("\(name)Mapping.swift", mapping),
            ("Fixture/\(name)Fixture.swift", fixture),
            ("README.md", readme),
            ("Snapshots/README.md", snapshotsReadme),
            ("Tests/\(name)Tests.swift", tests),
        ] + pages.map { ("Snapshots/\($0.file)", $0.body) }
        return list.map { ($0.0, fill($0.1)) }
    }

    func fill(_ text: String) -> String {
        text.replacingOccurrences(of: "__Name__", with: name).replacingOccurrences(of: "__id__", with: id)
    }

    var snapshotList: String {
        pages.map { page in
            let resource = page.file.replacingOccurrences(of: ".", with: "_")
            return "        RecordedResponse(url: \"\\(upstreamURL)/\(page.suffix)\", bytes: PackageResources.\(resource)),"
        }.joined(separator: "\n")
    }

    var source: String {
        """
        import FeedCore
        import FeedSupport
        import Foundation

        /// __Name__ (scaffolded example: replace with the real upstream). \(paging.summary)
        public struct __Name__Source: FeedSource {
            public static let plugin = "__id__"

            /// The upstream's base URL; the Sources.yml entry points here.
            public static let upstreamURL = "https://example.com/__id__"
        \(paging == .offset ? "\n    /// Items per upstream page.\n    static let limit = 3\n" : "")
            /// Served by `--offline` and `fallback: snapshot` for exactly these URLs.
            public static let snapshots = [
        \(snapshotList)
            ]

            let settings: SourceSettings
            let http: any HTTPTransport
            /// ISO 4217 code of every price (option `currency`, default USD).
            let currency: String

            public init(settings: SourceSettings, http: any HTTPTransport) throws {
                let options = settings.optionsReader()
                currency = options.currency("currency", default: "USD")
                try options.finish(allowedKeys: ["currency"])
                self.settings = settings
                self.http = http
            }

            public func page(after cursor: String?) async throws -> SourcePage {
        \(paging.pageFunction)
            }

            private func cards(_ page: __Name__Page) -> [Card] {
                page.items.elements.map { __Name__Mapping.card(for: $0, source: settings.id, currency: currency) }
            }

            // No detail endpoint: `aggregate show __id__:<id>` finds the card in the pages.
            // With one, implement `detail(id:)`: percent-encode the id into the URL and throw
            // `SourceError.notFound("no item with id …")` on a 404.
        }

        """
    }

    var wire: String {
        """
        import FeedCore
        import FeedSupport
        import Foundation

        /// One page of `GET {url}/items`, with the upstream's own field names. `LenientList`
        /// skips a record that does not decode and names its JSON path (`items[0]`).
        struct __Name__Page: Decodable {
            var items: LenientList<__Name__Item>\(paging.pageFields)
        }

        /// One record. Only the fields the mapping uses; a missing optional is fine, a missing
        /// `id` or `title` skips the record.
        struct __Name__Item: Decodable {
            var id: String
            var title: String
            /// A JSON number or a numeric string, kept exact.
            var price: LenientDecimal?
            var url: String?
            var image: String?
            var published: String?
        }

        """
    }

    var mapping: String {
        """
        import FeedCore
        import FeedSupport
        import Foundation

        /// From wire records to cards: a pure function, tested with exact cards.
        enum __Name__Mapping {
            static func card(for item: __Name__Item, source: String, currency: String) -> Card {
                Card(source: source, upstreamID: item.id, kind: .item, title: item.title,
                     price: item.price.map { Price(amount: $0.value, currency: currency) },
                     image: item.image.flatMap(ConfigMapReader.httpURL),
                     url: item.url.flatMap(ConfigMapReader.httpURL),
                     published: item.published.flatMap(RFC3339.date(from:)))
            }
        }

        """
    }

    var fixture: String {
        """
        import __Name__
        import FeedCore
        import FixtureKit
        import Foundation

        /// The fixture server's __Name__: `GET /__id__/items` pages the recorded items the way
        /// the upstream does, so end-to-end tests see its real paging.
        public struct __Name__Fixture: FixtureUpstream {
            public let name = "__id__"
            static let size = 3
            let items: [JSONValue]

            public init(pages: [Data]) {
                items = pages.flatMap { body -> [JSONValue] in
                    guard case .array(let items)? = (try? JSONDecoder().decode(JSONValue.self, from: body))?["items"] else { return [] }
                    return items
                }
            }

            public func respond(to request: FixtureRequest) -> FixtureResponse? {
                guard request.path == "/items" else { return nil }
        \(paging.fixtureAnswer)
            }
        }

        extension __Name__Source: BuiltinSource {
            public static func fixture(_ options: FixtureOptions) -> any FixtureUpstream {
                __Name__Fixture(pages: snapshots.map(\\.body))
            }

            public static let fixtureSources = [FixtureSourceEntry(id: "__id__", plugin: plugin, path: "/__id__", route: "__id__")]
        }

        """
    }

    var snapshotsReadme: String {
        let rows = pages.map { "| `\($0.file)` | `https://example.com/__id__/\($0.suffix)` | example data written by `swift package new-source`; replace with a recording |" }
        return """
            # __Name__ snapshots

            | file | upstream URL | where it came from |
            |---|---|---|
            \(rows.joined(separator: "\n"))

            Every top-level `*.json` here is compiled into the binary (`PackageResources.<file>_json`).
            Record real responses with `swift run aggregate record __id__ --into Plugins/__Name__/Snapshots`
            and list each in `__Name__Source.snapshots` with the URL it answers.

            """
    }

    var tests: String {
        let next: String = switch paging {
        case .none: "nil"
        case .page: "\"2\""
        case .offset: "\"3\""
        case .cursor: "\"after-3\""
        }
        return """
            import FeedCore
            import FeedSourceTesting
            import FeedSupport
            import Foundation
            import Testing
            @testable import __Name__

            @Suite struct __Name__Tests {
                /// The source as Sources.yml would configure it, over its recorded snapshots.
                func source(options: String = "currency: USD") throws -> __Name__Source {
                    try __Name__Source(settings: TestConfig.settings(for: __Name__Source.self, url: __Name__Source.upstreamURL, options: options),
                                       http: RecordedUpstream(snapshotsOf: __Name__Source.self))
                }

                @Test func theFirstRecordedPageMapsToExactCards() async throws {
                    let page = try await source().page(after: nil)
                    #expect(page.cards.first == Card(
                        source: "__id__", upstreamID: "1", kind: .item, title: "First example item",
                        price: Price(amount: try #require(Decimal(string: "12.5")), currency: "USD"),
                        image: URL(string: "https://example.com/__id__/images/1.jpg"),
                        url: URL(string: "https://example.com/__id__/items/1"),
                        published: RFC3339.date(from: "2026-01-05T10:00:00Z")))
                    #expect(page.cards.map(\\.id) == \(paging == .none ? "(1...5)" : "(1...3)").map { "__id__:\\($0)" })
                    #expect(page.next == \(next))
                }

                @Test func pricesStayExact() async throws {
                    let cards = try await source().page(after: nil).cards
                    #expect(cards[1].price?.amount == Decimal(string: "7.10"))
                    #expect(cards[2].price == nil)
                }

                @Test func conformance() async throws {
                    try await Conformance.check(__Name__Source.self)
                }
            }

            """
    }

    var sourcesEntry: String {
        fill("""

              - id: __id__              # scaffolded by `swift package new-source`: example data until you record the real upstream
                plugin: __id__
                enabled: false
                url: https://example.com/__id__
                fallback: snapshot

            """)
    }

    /// The module's own documentation: what it gives, its options, its upstream's quirks.
    var readme: String {
        fill("""
            # Source: `__id__` (scaffolded example)

            `url` is the upstream's base. \(paging.summary) Fills `title`, `price`, `url`, `image`
            and `published`. Replace this with what the real upstream gives, which card fields
            it fills, and its quirks. Options:

            | option | meaning |
            |---|---|
            | `currency` | ISO 4217 code of every price (default `USD`) |

            """)
    }
}
