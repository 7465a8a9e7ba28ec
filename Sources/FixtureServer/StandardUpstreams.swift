import Cabify
import TargetDeals
import Foundation

extension FixtureServer {
    /// Every upstream the built-in source modules use, from their recorded snapshots.
    public static func standard(control: FixtureControl = FixtureControl()) -> FixtureServer {
        FixtureServer(upstreams: [
            TargetFixture(list: TargetDealsSource.snapshots[0].body,
                          recordedDetails: [1: TargetDealsSource.snapshots[1].body]),
            CabifyFixture(products: CabifySource.snapshots[0].body),
        ], control: control)
    }
}
