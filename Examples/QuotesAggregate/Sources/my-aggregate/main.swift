import AggregateCommand
import Quotes
import SourceCatalogue

await Aggregate.main(sources: SourceCatalogue.sources + [QuotesSource.self])
