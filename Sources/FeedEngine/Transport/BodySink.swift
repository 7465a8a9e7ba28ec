import FeedCore
import Foundation
import NIOCore
import NIOFoundationCompat

/// A response body as it arrives. A large one goes to the cache's spool file once it
/// reaches ``BodyFiles/threshold`` (or says it will) and is handed on mapped from it; the
/// rest is kept in one buffer, made at the announced size when there is one (a buffer
/// that doubles as it grows holds the old and the new copy at each step). A spool that
/// fails (a full disk) costs the cache its copy, never the response.
struct BodySink {
    let spool: BodySpool?
    let announced: Int?
    private(set) var count = 0
    private var memory: ByteBuffer?
    private var file: SpooledBody?
    /// Set once the spool failed: the rest of the body stays in memory.
    private var spoolFailed = false

    init(spool: BodySpool?, announced: Int?) {
        self.spool = spool
        self.announced = announced
    }

    mutating func append(_ chunk: ByteBuffer) throws(SourceError) {
        count += chunk.readableBytes
        if file == nil, !spoolFailed, let spool, max(announced ?? 0, count) >= BodyFiles.threshold {
            if let started = try? spool.begin(), memory?.withUnsafeReadableBytes({ started.append($0) }) ?? true {
                file = started
                memory = nil
            } else {
                spoolFailed = true
            }
        }
        if let file {
            if chunk.withUnsafeReadableBytes({ file.append($0) }) { return }
            // The disk is full: carry on in memory, after what the file holds.
            memory = try Self.readBack(file)
            self.file = nil
            spoolFailed = true
            memory?.writeImmutableBuffer(chunk)
            return
        }
        if memory == nil, let announced, announced > chunk.readableBytes {
            var buffer = ByteBufferAllocator().buffer(capacity: announced)
            buffer.writeImmutableBuffer(chunk)
            memory = buffer
        } else if memory == nil {
            memory = chunk
        } else {
            memory?.writeImmutableBuffer(chunk)
        }
    }

    consuming func finish() throws(SourceError) -> Data {
        if let file {
            if let spool, let mapped = spool.finish(file) { return mapped }
            return Data(buffer: try Self.readBack(file))
        }
        return memory.map { Data(buffer: $0) } ?? Data()
    }

    private static func readBack(_ file: SpooledBody) throws(SourceError) -> ByteBuffer {
        guard let bytes = file.readBack() else {
            throw SourceError.transport(.other("the body could not be kept: its file in the cache folder could not be written or read back"))
        }
        return ByteBuffer(data: bytes)
    }
}
