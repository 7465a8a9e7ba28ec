/// A page by source (``StoredPageQuery/Order/source``): the sources by id, each one's
/// cards that pass the filter in feed order, found from how many each source has. A store
/// reads the page's slices — one source's, or the end of one and the start of the next —
/// from each source's own index, instead of ordering every kept card (26 s and 4 GB for a
/// page of a million cards).
public struct SourceRunsPage: Sendable, Equatable {
    /// One source's part of the page: how many of its filtered cards come before, and how
    /// many to read.
    public struct Slice: Sendable, Equatable {
        public var source: String
        public var skip: Int
        public var take: Int

        public init(source: String, skip: Int, take: Int) {
            self.source = source
            self.skip = skip
            self.take = take
        }
    }

    /// How many cards pass the filter in all the sources.
    public let total: Int
    /// The page's slices, in the page's order.
    public let slices: [Slice]

    /// `counts`: each source's filtered cards (a source without one has none).
    public init(sources: [String], counts: [String: Int], descending: Bool, offset: Int, limit: Int) {
        var seen = Set<String>()
        let ordered = sources.filter { seen.insert($0).inserted }.sorted { descending ? $0 > $1 : $0 < $1 }
        total = ordered.reduce(0) { $0 + max(0, counts[$1] ?? 0) }
        var slices: [Slice] = []
        var skip = max(0, offset)
        var left = max(0, limit)
        for source in ordered where left > 0 {
            let count = max(0, counts[source] ?? 0)
            if skip >= count {
                skip -= count
                continue
            }
            let take = min(left, count - skip)
            slices.append(Slice(source: source, skip: skip, take: take))
            left -= take
            skip = 0
        }
        self.slices = slices
    }
}
