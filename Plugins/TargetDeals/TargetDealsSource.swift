import FeedCore
import FeedSupport
import Foundation

/// Target's case-study deals API: `GET {url}/deals` (one list of deals, no paging) and
/// `GET {url}/deals/{id}` (one deal with its full description; 404 when unknown).
public struct TargetDealsSource: FeedSource {
    public static let plugin = "target-deals"

    /// The API's base URL; the shipped Sources.yml points here.
    public static let upstreamURL = "https://api.target.com/mobile_case_study_deals/v1"

    public static let snapshots = [
        RecordedResponse(url: "\(upstreamURL)/deals", bytes: PackageResources.deals_list_json),
        RecordedResponse(url: "\(upstreamURL)/deals/1", bytes: PackageResources.deal_1_json),
    ]

    let settings: SourceSettings
    let http: any HTTPTransport

    public init(settings: SourceSettings, http: any HTTPTransport) throws {
        try settings.optionsReader().finish(allowedKeys: [])
        self.settings = settings
        self.http = http
    }

    public func page(after cursor: String?) async throws -> SourcePage {
        let list = try await http.getJSON(TargetDealList.self, from: settings.url.appendingPathComponent("deals"), with: settings.json)
        var notes: [String] = []
        let cards = list.products.elements.map { TargetMapping.card(for: $0, source: settings.id, notes: &notes) }
        return SourcePage(cards: cards, total: cards.count, skipped: list.products.skipped, notes: notes)
    }

    public func detail(id: String) async throws -> Card {
        guard let number = Int(id), number >= 0 else { throw SourceError.notFound("no deal with id \(id)") }
        let response = try await http.get(settings.url.appendingPathComponent("deals/\(number)"))
        if response.status == 404 { throw SourceError.notFound("no deal with id \(id)") }
        guard response.isSuccess else { throw SourceError.badStatus(response.status) }
        let deal = try settings.json.decode(TargetDeal.self, from: response.body)
        guard deal.id == number else {
            throw SourceError.failed("asked for deal \(number), the upstream answered with deal \(deal.id)")
        }
        var notes: [String] = []
        return TargetMapping.detailCard(for: deal, source: settings.id, notes: &notes)
    }
}
