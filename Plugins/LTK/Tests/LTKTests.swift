import FeedCore
import FeedSupport
import FeedEngine
import Foundation
@testable import LTK
import FeedSourceTesting
import Testing

@Suite struct LTKTests {
    static let recorded = Dictionary(uniqueKeysWithValues: LTKSource.snapshots.map { ($0.url, $0.body) })

    func source(_ responses: [String: Data] = recorded, url: String = LTKSource.upstreamURL) throws -> LTKSource {
        try LTKSource(settings: SourceSettings(id: "ltk", url: URL(string: url)!, environment: [:], json: JSONBody.tape), http: RecordedUpstream(bodies: responses))
    }

    func allPages() async throws -> [SourcePage] {
        let source = try source()
        var pages = [try await source.page(after: nil)]
        while let next = pages.last?.next { pages.append(try await source.page(after: next)) }
        return pages
    }

    @Test func fourPagesChainedByNextURLEndWithoutOne() async throws {
        let pages = try await allPages()
        #expect(pages.map(\.cards.count) == [20, 20, 20, 12])
        #expect(pages.map(\.total) == [72, 72, 72, 72])
        #expect(pages.last?.next == nil)
        #expect(pages[0].next?.hasPrefix("https://api-gateway.rewardstyle.com/api/ltk/v2/ltks/?featured=true&last_id=") == true)
        #expect(pages[0].next?.contains("\\u0026") == false)
        #expect(pages.allSatisfy { $0.skipped.isEmpty })
        #expect(Set(pages.flatMap(\.cards).map(\.id)).count == 72)
    }

    @Test func theRealPostBecomesThisCard() async throws {
        let page = try await source().page(after: nil)
        let card = try #require(page.cards.first)
        #expect(card == Card(
            source: "ltk", upstreamID: "c70ee072-b8f8-11ec-a164-0242ac110004", kind: .post,
            title: "BATHROOM + HOME UPGRADE",
            summary: "Black door levers, gold sink faucet, single hole faucet, modern faucet, modern interior door handles, polished nickel vanity light, 3 light vanity light",
            image: URL(string: "https://images.liketoknow.it/c70ee072-b8f8-11ec-a164-0242ac110004"),
            url: URL(string: "https://liketk.it/3CoeL"),
            author: Card.Author(name: "modernnest", image: URL(string: "https://avatar-cdn.liketoknow.it/5b41988b-849e-11ec-8513-cc302b8cc1a3.c78680b4-b51a-11ec-a542-305307b43830")),
            published: RFC3339.date(from: "2022-04-10T18:05:20Z"),
            tags: ["#LTKhome", "#LTKunder100"],
            details: ["products": [
                ["id": "c9265188-b8f8-11ec-a6b9-0242ac110004",
                 "url": "https://rstyle.me/+-xlqwqWNh0wKGacjuX8chQ?li=c70ee072-b8f8-11ec-a164-0242ac110004&lpm=SIMILAR",
                 "image": "https://images.rewardstyle.com/img?v=1&width=256&height=256&crop&p=206745681"],
                ["id": "c92c12c5-b8f8-11ec-a6b9-0242ac110004",
                 "url": "https://rstyle.me/+m7vG2cxNmLjs3geDsPNggg?li=c70ee072-b8f8-11ec-a164-0242ac110004&lpm=SIMILAR",
                 "image": "https://images.rewardstyle.com/img?v=1&width=256&height=256&crop&p=206745812"],
                ["id": "c935007d-b8f8-11ec-a6b9-0242ac110004",
                 "url": "https://rstyle.me/+dDTybfYuBvdY6MiK6vxwG6?li=c70ee072-b8f8-11ec-a164-0242ac110004&lpm=SIMILAR",
                 "image": "https://images.rewardstyle.com/img?v=1&width=256&height=256&crop&p=206745943"],
            ]]))
    }

    @Test func aMissingProfileOrProductLeavesThatPartOutAndIsNoted() async throws {
        let page = try await source().page(after: nil)
        let orphan = page.cards[7]
        #expect(orphan.author == nil)
        #expect(orphan.title == "Teacher outfits for the week")
        let partial = page.cards[11]
        guard case .array(let products)? = partial.details["products"] else {
            Issue.record("products joined")
            return
        }
        #expect(products.count == 4)
        #expect(page.notes == [
            "post \(orphan.upstreamID): profile c787971b-b511-11ec-a54b-f21ee72f220c is not in profiles; no author",
            "post \(partial.upstreamID): 1 of 5 products not in products; left out",
        ])
    }

    @Test func aCaptionOfOnlyHashtagsFallsBackToTheAuthor() async throws {
        let pages = try await allPages()
        let card = pages[1].cards[3]
        #expect(card.title == "\(card.author?.name ?? "?")'s LTK")
        #expect(card.summary == nil)
        #expect(card.tags == ["#LTKhome", "#LTKfindsunder100"])
    }

    @Test func retailersAreJoinedWhenPresent() async throws {
        let pages = try await allPages()
        guard case .array(let products)? = pages[1].cards[0].details["products"] else {
            Issue.record("products joined")
            return
        }
        #expect(products.first?["retailer"] != nil)
        #expect(pages[0].cards.allSatisfy { card in
            guard case .array(let products)? = card.details["products"] else { return true }
            return products.allSatisfy { $0["retailer"] == nil }
        })
    }

    @Test(arguments: [
        ("BATHROOM + HOME UPGRADE:\nBlack door levers\n\n#LTKhome #LTKunder100", "BATHROOM + HOME UPGRADE", "Black door levers", ["#LTKhome", "#LTKunder100"]),
        ("Airport outfit ✈️ #LTKtravel\nLounge set", "Airport outfit ✈️", "Lounge set", ["#LTKtravel"]),
        ("#LTKhome #LTKhome", nil, nil, ["#LTKhome"]),
        ("", nil, nil, []),
        ("Price # 1 and C#", "Price # 1 and C#", nil, []),
    ] as [(String, String?, String?, [String])])
    func captions(text: String, title: String?, body: String?, hashtags: [String]) {
        let caption = Caption(text)
        #expect(caption.title == title)
        #expect(caption.body == body)
        #expect(caption.hashtags == hashtags)
    }

    @Test func aNextURLOnAnotherHostIsRefused() async throws {
        let source = try source()
        await #expect(throws: SourceError.failed("meta.next_url \"https://evil.test/ltks/?last_id=1\" is not on api-gateway.rewardstyle.com; stopped")) {
            try await source.page(after: "https://evil.test/ltks/?last_id=1")
        }
    }
}
