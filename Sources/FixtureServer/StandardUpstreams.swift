import Cabify
import Foundation

extension FixtureServer {
    /// Every upstream the built-in source modules use, from their recorded snapshots.
    public static func standard(control: FixtureControl = FixtureControl()) -> FixtureServer {
        FixtureServer(upstreams: [
            CabifyFixture(products: CabifySource.snapshots[0].body),
        ], control: control)
    }
}
