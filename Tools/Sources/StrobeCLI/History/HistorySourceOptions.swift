import ArgumentParser
import StrobeHistoryStore

/// `--history STORE` and `--password-file` on a command that reads a store
/// it may be given instead of results files (`strobe trend`): no store by
/// default, and never created or migrated.
struct HistorySourceOptions: ParsableArguments {
    @Option(
        name: .customLong("history"),
        help: "The store: a path (SQLite) or a postgres:// URL (no default: give a store or results files).")
    var store: String?

    @Option(
        name: .customLong("password-file"),
        help: "With a postgres:// --history, a file whose first line is the password (default: PGPASSWORD, else none).")
    var passwordFile: String?

    /// The first problem with the two, if any.
    var problem: String? {
        guard let store else { return passwordFile != nil ? "--password-file goes with --history" : nil }
        do { _ = try HistoryLocation.parse(store, passwordFile: passwordFile) } catch { return error.message }
        return nil
    }
}
