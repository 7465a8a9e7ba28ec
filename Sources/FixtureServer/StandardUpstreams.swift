import Cabify
import TargetDeals
import Dishwashers
import Foundation
import LTK
import Reqres

extension FixtureServer {
    /// Every upstream the built-in source modules use, from their recorded snapshots.
    /// `reqresKey`: demand this `x-api-key` from reqres clients.
    public static func standard(control: FixtureControl = FixtureControl(), reqresKey: String? = nil) -> FixtureServer {
        FixtureServer(upstreams: [
            TargetFixture(list: TargetDealsSource.snapshots[0].body,
                          recordedDetails: [1: TargetDealsSource.snapshots[1].body]),
            LTKFixture(pages: LTKSource.snapshots.map(\.body)),
            ReqresFixture(recordedPages: [1: ReqresSource.snapshots[0].body, 2: ReqresSource.snapshots[1].body],
                          requiredKey: reqresKey),
            DishwasherFixture(files: Dictionary(uniqueKeysWithValues: DishwashersSource.snapshots.map {
                (String($0.url.split(separator: "/").last ?? ""), $0.body)
            })),
            CabifyFixture(products: CabifySource.snapshots[0].body),
        ], control: control)
    }
}
