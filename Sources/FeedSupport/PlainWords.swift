import FeedCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Any error as one plain sentence for stderr: our own errors as they describe
/// themselves, Foundation's file errors as the system's reason (`Permission denied`,
/// `Not a directory`), never an `Error Domain=… UserInfo={…}` dump.
public enum PlainWords {
    /// An XML parser's error (`XMLParser`'s codes, which are libxml2's) in words.
    public static func xmlError(code: Int) -> String {
        switch code {
        case 1: "the parser gave up on it (a text in it may be over 10,000,000 bytes)"
        case 2: "out of memory"
        case 3: "it does not start with an element"
        case 4: "the document is empty"
        case 5: "the document ends early, or goes on after its end"
        case 6, 7, 8: "a character reference (&#…;) to no character"
        case 9: "a character XML does not allow"
        case 23: "an entity reference without its closing ;"
        case 26, 27: "an entity that is not declared"
        case 38, 39, 40, 41: "a malformed attribute"
        case 68: "a tag without a name"
        case 73: "a tag not closed with >"
        case 76: "an end tag that does not match its start tag, or a missing one"
        case 77: "a tag cut short: the document ends inside it"
        case 81: "bytes that are not in its declared encoding"
        case 85: "elements that do not nest"
        case 86: "more after the root element ends"
        case 89: "entities that expand into each other without end"
        default: "XML error \(code)"
        }
    }

    public static func describe(_ error: any Error) -> String {
        if error is SourceError || error is ConfigIssues || error is ConfigIssue {
            return "\(error)"
        }
        let bridged = error as NSError
        if bridged.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(bridged.code)))
        }
        if bridged.domain == NSCocoaErrorDomain {
            if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
                return String(cString: strerror(Int32(underlying.code)))
            }
            switch CocoaError.Code(rawValue: bridged.code) {
            case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file or directory"
            case .fileWriteNoPermission, .fileReadNoPermission: return "permission denied"
            case .fileWriteOutOfSpace: return "no space left on the device"
            case .fileWriteVolumeReadOnly: return "read-only file system"
            case .fileReadCorruptFile, .fileReadInapplicableStringEncoding: return "the file cannot be read as text"
            default: return "cannot be written (check that every parent is a directory you may write to)"
            }
        }
        return "\(error)"
    }
}
