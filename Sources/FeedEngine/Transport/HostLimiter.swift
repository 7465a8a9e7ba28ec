import Foundation

/// At most `limit` requests in flight per host, so a paging source cannot flood one
/// upstream. Waiters are served in arrival order.
actor HostLimiter {
    private let limit: Int
    private var inFlight: [String: Int] = [:]
    private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    func acquire(_ host: String) async {
        if inFlight[host, default: 0] < limit {
            inFlight[host, default: 0] += 1
            return
        }
        await withCheckedContinuation { waiting[host, default: []].append($0) }
    }

    /// Hands the slot to the next waiter, or frees it.
    func release(_ host: String) {
        if var queue = waiting[host], !queue.isEmpty {
            let next = queue.removeFirst()
            waiting[host] = queue
            next.resume()
        } else {
            inFlight[host, default: 1] -= 1
        }
    }

    func withSlot<T: Sendable>(for host: String, _ body: () async throws -> T) async throws -> T {
        await acquire(host)
        do {
            let value = try await body()
            release(host)
            return value
        } catch {
            release(host)
            throw error
        }
    }
}
