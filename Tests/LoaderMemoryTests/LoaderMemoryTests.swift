import Foundation
import LoaderMemory
import Testing

/// The relocation table the loader read before main is given back, and reads back from the
/// program file unchanged should anything touch it (this test process is a position-
/// independent program with such a table, like the command).
@Suite struct LoaderMemoryTests {
    @Test func theRelocationTableIsGivenBackAndReadsBackFromTheFile() throws {
        let pages = loader_memory_release_relocations()
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        try #require(pages.length > 0, "no relocation pages were given back")
        #expect(Int(pages.start) % pageSize == 0 && pages.length % pageSize == 0)
        #expect(try residentPages(start: pages.start, length: pages.length) == 0)

        let file = try fileBytes(mappedAt: pages.start, length: pages.length)
        let memory = Data(bytes: try #require(UnsafeRawPointer(bitPattern: pages.start)), count: pages.length)
        #expect(memory == file)
        #expect(try residentPages(start: pages.start, length: pages.length) == pages.length / pageSize)
    }

    /// Pages of the range this process has mapped in now (/proc/self/pagemap, bit 63).
    private func residentPages(start: UInt, length: Int) throws -> Int {
        let pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/pagemap"))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(start / pageSize * 8))
        let entries = try #require(try handle.read(upToCount: length / Int(pageSize) * 8))
        return stride(from: 0, to: entries.count, by: 8).filter { offset in
            entries[entries.startIndex + offset + 7] & 0x80 != 0
        }.count
    }

    /// The program file's bytes behind `length` bytes mapped at `start` (/proc/self/maps).
    private func fileBytes(mappedAt start: UInt, length: Int) throws -> Data {
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let bounds = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            guard fields.count >= 6, bounds.count == 2, bounds[0] <= start, start < bounds[1],
                  let offset = UInt(fields[2], radix: 16) else { continue }
            let handle = try #require(FileHandle(forReadingAtPath: String(fields[5...].joined(separator: " "))))
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(start - bounds[0] + offset))
            return try #require(try handle.read(upToCount: length))
        }
        Issue.record("no mapping holds \(String(start, radix: 16))")
        return Data()
    }
}
