import Foundation

/// The shared secret an uploader shows in `Authorization: Bearer TOKEN`.
///
/// It is read from a file or an environment variable, never from the command
/// line (where other users of the machine could read it in the process list),
/// and compared in time that does not depend on where a guess goes wrong.
package struct BearerToken: Sendable {
    private let bytes: [UInt8]

    /// The shortest token accepted: 16 characters.
    package static let minimumLength = 16

    /// A token of this text.
    ///
    /// - Throws: ``IngestServerError`` when it is shorter than
    ///   ``minimumLength`` or holds a space or control character; `origin`
    ///   names where it came from in the message.
    package init(_ text: String, origin: String) throws(IngestServerError) {
        guard text.utf8.count >= Self.minimumLength else {
            throw IngestServerError(
                "\(origin): the token has \(text.utf8.count) characters; at least \(Self.minimumLength) are needed")
        }
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw IngestServerError("\(origin): the token may hold only visible ASCII characters, no spaces")
        }
        bytes = Array(text.utf8)
    }

    /// The token in the file at `path`, without surrounding white space.
    ///
    /// - Throws: ``IngestServerError`` naming the file when it cannot be
    ///   read or its token is unfit.
    package static func read(file path: String) throws(IngestServerError) -> BearerToken {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw IngestServerError("--token-file \(path): cannot read the file")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return try BearerToken(text, origin: "--token-file \(path)")
    }

    /// Whether an `Authorization` header value carries this token.
    package func isCarried(by authorization: String?) -> Bool {
        guard let authorization else { return false }
        let scheme = "bearer "
        guard authorization.utf8.count > scheme.utf8.count,
            authorization.prefix(scheme.count).lowercased() == scheme
        else { return false }
        let offered = Array(authorization.utf8.dropFirst(scheme.utf8.count))
        // Every byte is compared whatever the earlier ones were.
        var difference = UInt8(truncatingIfNeeded: offered.count ^ bytes.count)
        for index in bytes.indices {
            difference |= bytes[index] ^ (index < offered.count ? offered[index] : 0)
        }
        return difference == 0
    }
}
