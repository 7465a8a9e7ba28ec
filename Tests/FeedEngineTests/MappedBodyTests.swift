@testable import FeedCore
@testable import FeedEngine
import Foundation
import Testing

/// A large cached body is a read-only file mapping whose pages a decode gives back as it
/// passes them; ordinary memory is never given back.
@Suite struct MappedBodyTests {
    struct Wire: Decodable, Equatable {
        var items: LenientList<Item>
    }

    struct Item: Decodable, Equatable {
        var id: Int
        var name: String
    }

    /// About 4 MiB of JSON, every record different, one bad record (`id` as text).
    static let body: Data = {
        var text = #"{"items": ["#
        for id in 0..<60_000 {
            if id > 0 { text += "," }
            text += id == 30_000
                ? #"{"id": "thirty thousand", "name": "bad"}"#
                : #"{"id": \#(id), "name": "record number \#(id) with some padding text"}"#
        }
        return Data((text + "]}").utf8)
    }()

    static func expectDecodedRight(_ wire: Wire) {
        #expect(wire.items.elements.count == 59_999)
        #expect(wire.items.elements.first == Item(id: 0, name: "record number 0 with some padding text"))
        #expect(wire.items.elements[29_999] == Item(id: 29_999, name: "record number 29999 with some padding text"))
        #expect(wire.items.elements[30_000] == Item(id: 30_001, name: "record number 30001 with some padding text"))
        #expect(wire.items.elements.last == Item(id: 59_999, name: "record number 59999 with some padding text"))
        #expect(wire.items.skipped.map(\.description) == ["skipped items[30000]: id is text, expected a number"])
    }

    @Test func aMappedBodyIsResidentOnlyWhileItIsRead() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapped-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = BodyFiles(folder: folder)
        let name = try files.write(Self.body)
        let mapped = try #require(files.read(name))
        #expect(mapped == Self.body)
        #expect(mapped.withUnsafeBytes { MappedBodies.contains($0) })
        #if os(Linux)
        // Comparing touched every page: the measure below can see a resident body.
        let resident = try Self.residentKiB(ofFile: name)
        #expect(resident >= Self.body.count / 4096 * 4)
        #endif

        Self.expectDecodedRight(try JSONBody.decode(Wire.self, from: mapped))
        #if os(Linux)
        // Given back behind the scan and the decode; the last partial page may stay.
        #expect(try Self.residentKiB(ofFile: name) <= 4)
        #endif
        // Pages given back are read again from the file.
        #expect(mapped == Self.body)
        Self.expectDecodedRight(try JSONBody.decode(Wire.self, from: mapped))
    }

    @Test func ordinaryMemoryKeepsItsPages() throws {
        // The same bytes in memory: a decode must leave every byte as it was.
        let inMemory = Data(Self.body)
        #expect(!inMemory.withUnsafeBytes { MappedBodies.contains($0) })
        Self.expectDecodedRight(try JSONBody.decode(Wire.self, from: inMemory))
        #expect(inMemory == Self.body)
    }

    @Test func aMappingIsUnregisteredBeforeItIsUnmapped() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapped-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = BodyFiles(folder: folder)
        let name = try files.write(Self.body)
        var mapped: Data? = files.read(name)
        try #require(mapped != nil)
        let address = mapped?.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) } ?? 0
        #expect(MappedBodies.contains(UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: address), count: 1)))
        mapped = nil
        #expect(!MappedBodies.contains(UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: address), count: 1)))
    }

    #if os(Linux)
    /// The resident size of this process's mapping of the body file `name`, from smaps.
    static func residentKiB(ofFile name: String) throws -> Int {
        // /proc files say they are empty: read to the end rather than by their size.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        var inMapping = false
        var total = 0
        var found = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), range.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                inMapping = fields.last.map { $0.hasSuffix("/" + name) } ?? false
                found = found || inMapping
            } else if inMapping, fields.first == "Rss:", fields.count >= 2, let kib = Int(fields[1]) {
                total += kib
            }
        }
        try #require(found, "no mapping of \(name) in /proc/self/smaps")
        return total
    }
    #endif
}
