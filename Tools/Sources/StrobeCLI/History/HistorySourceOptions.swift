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

    @OptionGroup var password: PostgresPasswordOption

    /// The first problem with the two, if any.
    var problem: String? {
        if let problem = password.problem(store: store, storeFlag: "--history") { return problem }
        guard let store else { return nil }
        do { _ = try HistoryLocation.parse(store, passwordFile: password.file) } catch { return error.message }
        return nil
    }
}
