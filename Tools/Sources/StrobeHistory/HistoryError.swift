/// Why the run history could not be opened, read or added to.
///
/// The description is one line that names what is wrong: the store, the
/// file (and byte), the metric and runs, or the server's message.
public struct HistoryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Kind: String, Sendable, Hashable {
        /// The store's location is not a path or a `postgres://` URL that can be used.
        case badLocation
        /// A flag's value cannot be used (a `--where` without `=`).
        case badArgument
        /// The server cannot be reached, or refused the login.
        case unreachable
        /// No store exists where a command that only reads looked for one.
        case noStore
        /// The store was written by a newer Strobe: its schema version is higher than this one knows.
        case newerSchema
        /// A command that only reads found a store of an older schema version, which it does not migrate.
        case olderSchema
        /// A results file cannot be read or does not parse.
        case badResults
        /// A metric's unit differs from the unit stored for it by earlier runs.
        case unitChanged
        /// The database refused a statement.
        case database
    }

    /// What kind of problem it is.
    public var kind: Kind
    /// The whole message.
    public var message: String

    /// A problem of `kind`, said by `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
