import FeedState
import SameItem

extension ItemDecisions {
    /// The decisions the store keeps, as the matcher reads them.
    public init(_ decisions: [ItemDecision]) {
        self.init(same: decisions.filter(\.same).map { [$0.pair.first, $0.pair.second] },
                  apart: Set(decisions.filter { !$0.same }.map { [$0.pair.first, $0.pair.second] }))
    }
}
