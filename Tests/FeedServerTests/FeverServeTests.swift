@testable import FeedServer
@testable import ServeAccess
import FeedSourceTesting
import FeedState
import FeverModel
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The Fever API's paging and keys (issue 62), in process: items in pages of 50 by
/// `since_id` and `max_id`, `with_ids`, a wrong key answered `auth: 0` and an address that
/// keeps guessing refused, and a server without accounts open to any key.
@Suite struct FeverServeTests {
    /// The five shops and APIs: 127 items, two pages and a part.
    static let sources = FixtureWorld.only("target", "ltk", "users", "dishwashers", "cabify")

    static func call(_ served: ServedInProcess, _ query: String, key: String, form: String = "") async throws -> (status: HTTPResponse.Status, json: [String: Any]) {
        let answer = try await served.client.execute(uri: "/api/fever/?api&" + query, method: .post,
                                                     headers: [.contentType: "application/x-www-form-urlencoded"],
                                                     body: ByteBuffer(string: "api_key=\(key)" + form))
        return (answer.status, (try? JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? [String: Any]) ?? [:])
    }

    static func ids(_ items: Any?) -> [Int] {
        (items as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
    }

    @Test func itemsArePagedByTheirNumbersAndWrongKeysAreRefused() async throws {
        let (state, _) = try await PeopleServeTests.people()
        let ann = try #require(try await state.accounts.account(named: "ann"))
        let key = AccountToken.feverKey(name: "ann", password: "ann's fever password")
        let made = AccountToken.fever(user: ann.id, key: key, at: Date())
        try await state.accounts.add(made.token, secretHash: made.secretHash)
        try await ServedInProcess.with(sources: Self.sources, state: state, access: PeopleServeTests.accounts()) { served in
            await served.clock.untilSleeping(Self.sources.count)
            let total = try #require(try await Self.call(served, "items", key: key).json["total_items"] as? Int)
            #expect(total == 127)

            // Forward from 0: pages of 50, ids rising, every item once, then an empty page.
            var forward: [Int] = []
            var pages: [Int] = []
            var since = 0
            while pages.count < 10 {
                let page = Self.ids(try await Self.call(served, "items&since_id=\(since)", key: key).json["items"])
                pages.append(page.count)
                guard let last = page.last else { break }
                #expect(page == page.sorted() && page.allSatisfy { $0 > since })
                forward += page
                since = last
            }
            #expect(pages == [50, 50, 27, 0])
            #expect(forward.count == total && Set(forward).count == total)
            #expect(forward == Array(1...total))

            // Back from the newest (max_id=0), then below the lowest seen.
            var backward: [Int] = []
            var below = 0
            while backward.count < total + 50 {
                let page = Self.ids(try await Self.call(served, "items&max_id=\(below)", key: key).json["items"])
                guard let last = page.last else { break }
                #expect(page.count <= 50 && page == page.sorted(by: >))
                backward += page
                below = last
            }
            #expect(backward == forward.reversed())
            #expect(Self.ids(try await Self.call(served, "items&with_ids=\(forward[3]),99999,\(forward[1])", key: key).json["items"]) == [forward[1], forward[3]])
            #expect(try await Self.call(served, "unread_item_ids", key: key).json["unread_item_ids"] as? String == forward.map(String.init).joined(separator: ","))
            // A key in capitals is the same key.
            #expect(try await Self.call(served, "", key: key.uppercased()).json["auth"] as? Int == 1)

            // Wrong keys: auth 0, until the address is refused, the right key too.
            for _ in 0..<SignInLimits.perPersonAndAddress {
                let wrong = try await Self.call(served, "items", key: String(repeating: "0", count: 32))
                #expect(wrong.status == .ok && wrong.json.count == 2 && wrong.json["auth"] as? Int == 0)
            }
            let refused = try await served.client.execute(uri: "/api/fever/?api", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                                                          body: ByteBuffer(string: "api_key=\(key)"))
            #expect(refused.status == .tooManyRequests && refused.headers[.retryAfter] != nil)
        }
    }

    /// On a server without accounts (this machine's), every key is the owner's; a mark
    /// from another site's page is refused, as every mark of the open owner is.
    @Test func withoutAccountsAnyKeyIsThisMachinesOwner() async throws {
        try await ServedInProcess.with(sources: FixtureWorld.only("cabify")) { served in
            await served.clock.untilSleeping(1)
            let answer = try await Self.call(served, "items&feeds", key: "anything")
            #expect(answer.json["auth"] as? Int == 1)
            let items = try #require(answer.json["items"] as? [[String: Any]])
            #expect(items.compactMap { $0["title"] as? String }.sorted() == ["Cabify Coffee Mug", "Cabify T-Shirt", "Cabify Voucher"])
            let mug = try #require(items.first { $0["title"] as? String == "Cabify Coffee Mug" })
            #expect((mug["url"] as? String)?.hasSuffix("/cards/cabify:MUG") == true, "\(mug)")
            let feedID = try #require((answer.json["feeds"] as? [[String: Any]])?.first?["id"] as? Int)
            #expect(mug["feed_id"] as? Int == feedID)
            let id = try #require(mug["id"] as? Int)
            let crossSite = try await served.client.execute(uri: "/api/fever/?api", method: .post,
                                                            headers: [.contentType: "application/x-www-form-urlencoded", .secFetchSite: "cross-site"],
                                                            body: ByteBuffer(string: "api_key=x&mark=item&as=read&id=\(id)"))
            #expect(crossSite.status == .forbidden)
            _ = try await Self.call(served, "", key: "x", form: "&mark=item&as=saved&id=\(id)")
            #expect(try await Self.call(served, "saved_item_ids", key: "x").json["saved_item_ids"] as? String == String(id))
        }
    }

    /// Ids of feeds and groups are stable hashes of their names: the same whatever else is
    /// subscribed, positive 31-bit numbers.
    @Test func feedAndGroupIdsStayWhenTheListChanges() {
        let one = Fever.Catalog.ids(for: ["a", "b"], kind: "feed")
        let two = Fever.Catalog.ids(for: ["b", "c", "a", "d"], kind: "feed")
        #expect(one["a"] == two["a"] && one["b"] == two["b"])
        #expect(two.values.allSatisfy { (1...Int(Int32.max)).contains($0) } && Set(two.values).count == 4)
    }
}
