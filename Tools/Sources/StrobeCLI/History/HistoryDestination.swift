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

    @OptionGroup var password: PostgresPasswordOption

    func validate() throws {
        if let problem = password.problem(store: store, storeFlag: "--history") { throw ValidationError(problem) }
        guard let store else { return }
        try HistoryStoreOptions(store: store, password: password).validate()
    }

    /// Adds the results files under `paths` to the store, when one was
    /// given; with `comparison`, the baseline and candidate directories of
    /// a `strobe compare` output are recorded as its sides. Waits until
    /// they are stored; the failure is bad input (exit status 2).
    func record(_ paths: [String], comparison: Bool = false) throws {
        guard let store else { return }
        let options = HistoryStoreOptions(store: store, password: password)
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
    init(store: String, password: PostgresPasswordOption) {
        self.init()
        self.store = store
        self.password = password
    }
}
