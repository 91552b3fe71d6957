import StrobeHistory

/// Whether a command may change the store it opens.
///
/// Commands that only read (`strobe trend`, `strobe fleet`, `strobe history
/// export`, `strobe history list`, `strobe diff --baseline-history`) open
/// with ``readOnly``: a missing store, a file that is not a store, or a
/// store at another schema version is an error, and nothing is created,
/// migrated or changed. Commands that write open with ``readWrite``.
public enum HistoryAccess: Sendable, Hashable {
    /// Create the store when it is missing and bring its schema to the
    /// current version.
    case readWrite
    /// Open only an existing store at the current schema version, and write
    /// nothing.
    case readOnly

    /// The message for a read of a store that does not exist.
    static func missingStore(_ store: String) -> String {
        "\(store): no history store there (commands that write, such as `strobe history add`, create one)"
    }

    /// The message for a database without the history's tables.
    static func notAStore(_ store: String) -> String {
        "\(store): not a history store (it holds no strobe_schema table)"
    }

    /// Refuses, for a read, a store whose schema is not the current one.
    static func checkReadable(version: Int, store: String) throws(HistoryError) {
        if version > HistorySchema.currentVersion { throw HistorySchema.newer(version, store: store) }
        if version < HistorySchema.currentVersion {
            throw HistoryError(
                .olderSchema,
                "\(store): the history's schema is at version \(version), older than this strobe's "
                    + "\(HistorySchema.currentVersion); `strobe history upgrade --history \(store)` brings it up to "
                    + "date (so does any command that writes, such as `strobe history add`)"
            )
        }
    }
}
