import ArgumentParser

/// `--password-file FILE`, beside the option that names a store: the
/// password of a postgres:// store comes from the file's first line (or
/// from PGPASSWORD), never from the command line.
struct PostgresPasswordOption: ParsableArguments {
    @Option(
        name: .customLong("password-file"),
        help: "With a postgres:// store, a file whose first line is the password (default: PGPASSWORD, else none).")
    var file: String?

    /// The problem when the file is given and `store`, the value of the
    /// option `storeFlag` it goes with, is not.
    func problem(store: String?, storeFlag: String) -> String? {
        store == nil && file != nil ? "--password-file goes with \(storeFlag)" : nil
    }
}
