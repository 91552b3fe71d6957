import ArgumentParser
import Dispatch
import Foundation

/// `--history STORE` on a command that writes results (`strobe run`,
/// `strobe compare`): the runs it wrote are added to the store too.
struct HistoryDestinationOptions: ParsableArguments {
    @Option(
        name: .customLong("history"),
        help: """
            Also add the runs to this store: a path (SQLite) or a postgres:// URL (see `strobe history`; default: \
            none, nothing is stored).
            """
    )
    var store: String?

    @Option(
        name: .customLong("password-file"),
        help: "With a postgres:// --history, a file whose first line is the password (default: PGPASSWORD, else none).")
    var passwordFile: String?

    func validate() throws {
        guard let store else {
            if passwordFile != nil { throw ValidationError("--password-file goes with --history") }
            return
        }
        try HistoryStoreOptions(store: store, passwordFile: passwordFile).validate()
    }

    /// Adds the results files under `paths` to the store, when one was
    /// given; with `comparison`, the baseline and candidate directories of
    /// a `strobe compare` output are recorded as its sides. Waits until
    /// they are stored; the failure is bad input (exit status 2).
    func record(_ paths: [String], comparison: Bool = false) throws {
        guard let store else { return }
        let options = HistoryStoreOptions(store: store, passwordFile: passwordFile)
        let outcome = Outcome()
        // The command itself is synchronous; the store's client is not.
        Task.detached {
            do {
                try await addToHistory(paths, recognizeComparisons: comparison, options: options)
            } catch {
                outcome.failure = error
            }
            outcome.done.signal()
        }
        outcome.done.wait()
        if let error = outcome.failure { throw error }
    }
}

/// How the detached add ended: written before `done` is signalled, read
/// after it is waited for.
private final class Outcome: @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    var failure: (any Error)?
}

extension HistoryStoreOptions {
    /// Options naming `store`.
    init(store: String, passwordFile: String?) {
        self.init()
        self.store = store
        self.passwordFile = passwordFile
    }
}
