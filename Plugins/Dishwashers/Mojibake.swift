/// Repairs UTF-8 text that was decoded once as Windows-1252 (`Â£` for `£`, `â€™` for
/// `’`): the text is turned back into bytes and read as UTF-8. Text that does not
/// round-trip (a proper `£`, plain ASCII) is returned unchanged.
enum Mojibake {
    /// Windows-1252 bytes 0x80–0x9F that are not the same code point in Unicode.
    private static let cp1252: [Unicode.Scalar: UInt8] = [
        "€": 0x80, "‚": 0x82, "ƒ": 0x83, "„": 0x84, "…": 0x85, "†": 0x86, "‡": 0x87, "ˆ": 0x88, "‰": 0x89,
        "Š": 0x8A, "‹": 0x8B, "Œ": 0x8C, "Ž": 0x8E, "‘": 0x91, "’": 0x92, "“": 0x93, "”": 0x94, "•": 0x95,
        "–": 0x96, "—": 0x97, "˜": 0x98, "™": 0x99, "š": 0x9A, "›": 0x9B, "œ": 0x9C, "ž": 0x9E, "Ÿ": 0x9F,
    ]

    static func repair(_ text: String) -> String {
        // Every mojibake of a multi-byte UTF-8 sequence starts with one of these (U+00C2 to
        // U+00F4, all written C3 xx in UTF-8: the byte check skips clean text quickly).
        guard text.utf8.contains(0xC3), text.unicodeScalars.contains(where: { (0xC2...0xF4).contains($0.value) }) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if scalar.value < 0x100 {
                bytes.append(UInt8(scalar.value))
            } else if let byte = cp1252[scalar] {
                bytes.append(byte)
            } else {
                return text
            }
        }
        guard let repaired = String(validating: bytes, as: UTF8.self), repaired != text else { return text }
        return repaired
    }
}
