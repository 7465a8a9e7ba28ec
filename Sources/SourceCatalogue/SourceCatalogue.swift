import FeedCore
import Cabify
import Dishwashers
import Exec
import JSONAPI
import LTK
import Reqres
import TargetDeals
import WebFeed
import WebPage

/// The one list of built-in source modules, read by the command line, the fixture server
/// and the tests (through `FixtureCatalogue`, which adds each one's fixture route). Adding a source: its folder under Plugins/ and its line here (with its
/// import above); `swift package new-source` writes both.
public enum SourceCatalogue {
    public static let sources: [any FeedSource.Type] = [
        TargetDealsSource.self,
        LTKSource.self,
        ReqresSource.self,
        DishwashersSource.self,
        CabifySource.self,
        JSONAPISource.self,
        ExecSource.self,
        WebFeedSource.self,
        WebPageSource.self,
    ]

    /// The shops' demo Sources.yml, as the repository ships it: `aggregate init --demo`.
    public static let demoSourcesYml = String(decoding: PackageResources.DemoSources_yml, as: UTF8.self)
}
