import FeedCore
import FeedEngine
import FeedState
import Foundation
import SameItem
import Testing

/// A page of kept cards made one per item (`--stored --merge`, the reader), over the
/// in-memory store: copies found by key, and cards a person joined that share none.
@Suite struct ItemsOnPageTests {
    let at = Date(timeIntervalSince1970: 1_795_000_000)

    func post(_ source: String, _ id: String, _ title: String, _ url: String) -> Card {
        Card(source: source, upstreamID: id, kind: .post, title: title, url: URL(string: url), published: at)
    }

    @Test func aPageFindsItsCopiesByKeyAndThoseAPersonJoined() async throws {
        let store = InMemoryCardStore()
        let herald = post("herald", "1", "Harbour works begin", "https://herald.example/harbour")
        let digest = post("digest", "1", "Works at the harbour", "https://herald.example/harbour?utm_source=rss")
        let note = post("notes", "1", "Something else entirely", "https://notes.example/other")
        await store.record([LiveListing(source: "herald", cards: [herald], complete: true, at: at),
                                LiveListing(source: "digest", cards: [digest], complete: true, at: at),
                                LiveListing(source: "notes", cards: [note], complete: true, at: at)])
        let order = ["herald": 0, "digest": 1, "notes": 2]
        let page = await store.cards(ids: [herald.id])
        // The same link: the digest's copy is under the herald's card, though not on the page.
        let byKey = try await ItemsOnPage(index: store, store: store, decisions: ItemDecisions(), sourceOrder: order).merged(page)
        #expect(byKey.map(\.card.id) == [herald.id])
        #expect(byKey.first?.card.also?.map(\.id) == [digest.id])
        // A person's word joins the note, which shares no key with either.
        let decided = ItemDecisions(same: [[herald.id, note.id]])
        let byWord = try await ItemsOnPage(index: store, store: store, decisions: decided, sourceOrder: order).merged(page)
        #expect(byWord.first?.card.also?.map(\.id) == [digest.id, note.id])
    }
}
