import ArgumentParser
import FeedEngine
import FeedFormats

/// `aggregate show SOURCE:ID`: one card with its detail data.
struct ShowCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print one card, with its source's detail data when the source has a detail endpoint.",
        discussion: "On a terminal (or with --format text) the card is a readable block: every field, then its details.")

    @Argument(help: ArgumentHelp("The card id, SOURCE:ID (e.g. cabify:MUG).", valueName: "card-id"))
    var cardID: String

    @OptionGroup var common: CommonOptions
    @OptionGroup var output: CardFormatOptions

    func run(in context: CommandContext) async throws {
        let result = try await common.withRunner(context.registry) { try await $0.show(cardID) }
        switch result {
        case .found(let card, let outcome):
            if output.formatType == TextFormat.self {
                context.stdout.write(CardDetailText.render(card, width: Terminal.width))
            } else {
                output.print([card], to: context.stdout)
            }
            common.report([outcome])
            if outcome.isDegraded || (common.strict && outcome.origin != nil) { throw ExitStatus.partial.code }
        case .notFound(let message, let outcome):
            common.report([outcome])
            Terminal.writeError(message)
            throw ExitStatus.failed.code
        case .failed(let outcome):
            common.report([outcome])
            throw ExitStatus.failed.code
        }
    }
}
