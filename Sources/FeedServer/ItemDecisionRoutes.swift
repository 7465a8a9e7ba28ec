import FeedState
import Foundation
import Hummingbird
import ServeAccess
import ServeHTTP

/// A person's word on which cards are one item, from the reader (as `aggregate same` and
/// `aggregate apart`): `POST /items/same` and `POST /items/apart` with `ids=` (repeated).
/// The decisions are everyone's (one store of items), so they are an admin's to make.
extension FeedRoutes {
    func registerItemDecisions(on group: RouterGroup<ServeRequestContext>) {
        group.post("/items/same") { request, _ in await self.decide(request, same: true) }
        group.post("/items/apart") { request, _ in await self.decide(request, same: false) }
    }

    /// Records the decision on the form's cards (`same`: the first with each other; apart:
    /// exactly two), retires the pages that show their sources, and goes back.
    private func decide(_ request: Request, same: Bool) async -> Response {
        let form = await FormGuard.form(of: request)
        guard let store, let itemDecisions else { return Problem.notFound("no card store").response }
        var seen = Set<String>()
        let ids = form.getAll("ids").filter { seen.insert($0).inserted }
        guard same ? (2...100).contains(ids.count) : ids.count == 2 else {
            return Problem.badParameter("ids", same ? "give two to 100 different cards that are one item" : "give the two different cards to keep apart").response
        }
        do {
            let kept = try await store.cards(ids: ids)
            if let missing = ids.first(where: { id in !kept.contains { $0.card.id == id } }) {
                return Problem.notFound("no card \(missing) in the card store").response
            }
            let pairs = same ? ids.dropFirst().map { ItemPair(ids[0], $0) } : [ItemPair(ids[0], ids[1])]
            try await itemDecisions.decide(pairs, same: same, at: Date())
            recentDecisions.forget()
            // Every kept page showing these sources is made again with the decision.
            for source in Set(kept.map(\.card.source)) { versions.bump(source) }
        } catch {
            return Problem(title: "Service Unavailable", status: 503, detail: "the card store cannot be written now").response
        }
        return Response(status: .seeOther, headers: [.location: SameServerPath.safe(form.get("return")) ?? "/", .cacheControl: "no-store"])
    }
}
