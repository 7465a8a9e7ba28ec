import AggregateCommand
import SourceCatalogue

// The command with the built-in sources. A package that adds its own sources has a file
// like this one with its list (Examples/).
await Aggregate.main(sources: SourceCatalogue.sources, demo: SourceCatalogue.demoSourcesYml)
