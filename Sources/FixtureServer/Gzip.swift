import CompressNIO
import Foundation
import NIOCore

/// A gzip body, for the fault that proves `Content-Encoding: gzip` is handled.
enum Gzip {
    static func wrap(_ data: Data) -> Data {
        var buffer = ByteBuffer(bytes: data)
        // Compressing a bounded in-memory buffer fails only when zlib cannot allocate.
        guard let compressed = try? buffer.compress(with: .gzip()) else { return data }
        return Data(compressed.readableBytesView)
    }
}
