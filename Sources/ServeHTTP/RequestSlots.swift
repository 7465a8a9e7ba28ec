import Hummingbird

/// At most `count` requests are worked on at once; the others wait their turn, in order.
///
/// Memory follows the work in flight: each request builds its cards and its document, and
/// glibc keeps what a burst freed for later, so a server that answered 6,000 requests at
/// once kept 1.85 GB. With the work bounded, a burst costs what `count` requests cost,
/// and resident memory stays near its baseline after it. A waiting request holds only its
/// connection (which ``ConnectionLimits`` bounds). Requests are short (the cache and the
/// shared upstream requests make most of them a render), so waiting is brief.
package actor RequestSlots {
    private let count: Int
    private var busy = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init(count: Int) {
        self.count = count
    }

    /// Runs `work` in a slot, waiting for one if all are taken.
    package nonisolated func run<T: Sendable>(_ work: () async throws -> T) async rethrows -> T {
        await acquire()
        do {
            let result = try await work()
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }

    private func acquire() async {
        if busy < count {
            busy += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            busy -= 1
        } else {
            // The slot passes to the first in line: `busy` stays the same.
            waiting.removeFirst().resume()
        }
    }
}
