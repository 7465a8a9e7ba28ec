import Cabify
import Dishwashers
import FeedCore
import LTK
import Reqres
import TargetDeals

/// The one list of built-in source modules (the composition root). Adding a source:
/// a folder under Plugins/, its name in Package.swift's `sourceModules`, one line here,
/// one entry in Sources.yml.
let builtinSources: [any FeedSource.Type] = [
    TargetDealsSource.self,
    LTKSource.self,
    ReqresSource.self,
    DishwashersSource.self,
    CabifySource.self,
]
