import CabifyFixture
import DishwashersFixture
import ExecFixture
import FeedCore
import FixtureKit
import JSONAPIFixture
import LTKFixture
import ReqresFixture
import SourceCatalogue
import TargetDealsFixture
import WebFeedFixture
import WebPageFixture

/// The catalogue's sources with their fixture routes, for the fixture server and the
/// tests; `aggregate` does not link it. The list is ``SourceCatalogue/sources``: each
/// source's `<Name>Fixture` module makes it a ``BuiltinSource``.
public enum FixtureCatalogue {
    public static let sources: [any BuiltinSource.Type] = SourceCatalogue.sources.compactMap { $0 as? any BuiltinSource.Type }

    /// Sources of the catalogue without a fixture route (a module whose `<Name>Fixture` is
    /// not imported above): none, or the fixture world is missing an upstream.
    public static var withoutFixture: [String] {
        SourceCatalogue.sources.filter { !($0 is any BuiltinSource.Type) }.map { $0.plugin }
    }
}
