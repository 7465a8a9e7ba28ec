import FeedCore
import FeedSourceTesting
import Foundation
import FeedConfig
import Testing
@testable import WebPage

@Suite struct WebPageTests {
    @Test func prices() {
        #expect(PriceText.parse("£1,299.00", currency: nil) == Price(amount: 1299, currency: "GBP", display: "£1,299.00"))
        #expect(PriceText.parse("1.299,00 €", currency: nil)?.amount == 1299)
        #expect(PriceText.parse("24,50 €", currency: nil) == Price(amount: Decimal(string: "24.5")!, currency: "EUR", display: "24,50 €"))
        #expect(PriceText.parse("EUR 12,50", currency: nil)?.currency == "EUR")
        #expect(PriceText.parse("1 299 kr", currency: "SEK") == Price(amount: 1299, currency: "SEK", display: "1 299 kr"))
        #expect(PriceText.parse("$5", currency: nil) == Price(amount: 5, currency: "USD", display: "$5"))
        #expect(PriceText.parse("1,299", currency: "USD")?.amount == 1299)
        #expect(PriceText.parse("Sold out", currency: "USD") == nil)
        // A symbol is the currency even after a word in capitals; a word is a code only if ISO lists it.
        #expect(PriceText.parse("NEW £5", currency: nil) == Price(amount: 5, currency: "GBP", display: "NEW £5"))
        #expect(PriceText.parse("SALE 12.50", currency: "CHF")?.currency == "CHF")
        #expect(PriceText.parse("NOW 12.50 CHF", currency: nil)?.currency == "CHF")
    }

    /// The structured-data reader's fixed queries are read once; one libxml2 could not
    /// read would find nothing on every page.
    @Test func structuredDataQueriesAreRead() {
        #expect(StructuredData.linkedDataScripts != nil)
        #expect(StructuredData.microdataScopes != nil)
        #expect(StructuredData.metaTags != nil)
        #expect(StructuredData.microdataProperties.count == 10)
    }

    /// A selector that is not understood is reported at its character, quoted or not.
    @Test func aSelectorProblemNamesItsColumn() {
        let yaml = """
            sources:
              - id: shop
                plugin: html
                url: https://shop.example/news
                options:
                  item: "article..post"
                  title: h2 >> a

            """
        var problems: [String] = []
        do {
            _ = try ConfigLoader(registry: SourceRegistry([WebPageSource.self]), environment: [:]).load(text: yaml, file: "Sources.yml")
        } catch {
            problems = error.issues.map(\.description)
        }
        #expect(problems.count == 2)
        #expect(problems.first?.hasPrefix("Sources.yml:6:22: sources[0].options.item: \"article..post\"") == true)
        #expect(problems.last?.hasPrefix("Sources.yml:7:18: sources[0].options.title: \"h2 >> a\"") == true)
    }
}
