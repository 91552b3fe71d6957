import ArgumentParser
import Foundation
import StrobeHistory
import StrobeHistoryStore

/// `strobe history`: the store of every run, shared by CI runners and
/// devices.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Keep every run in a store: an SQLite file, or PostgreSQL for a team.",
        discussion: """
            STORE is a path (an SQLite file, created when missing; default .strobe/history.sqlite) or \
            postgres://USER@HOST:PORT/DATABASE (postgres://USER@/DATABASE?host=/SOCKET/DIR for a Unix \
            socket). The password comes from the PGPASSWORD environment variable or --password-file, \
            never from the command line. A run is stored once, under its run id, in one transaction.
            """,
        subcommands: [
            HistoryAddCommand.self, HistoryImportCommand.self, HistoryExportCommand.self, HistoryListCommand.self,
            HistoryMarkCommand.self, HistoryUpgradeCommand.self,
        ]
    )
}

/// The `--history` and `--password-file` options.
struct HistoryStoreOptions: ParsableArguments {
    @Option(name: .customLong("history"), help: "The store: a path (SQLite) or a postgres:// URL.")
    var store: String = HistoryLocation.defaultPath

    @OptionGroup var password: PostgresPasswordOption

    func validate() throws {
        do {
            _ = try HistoryLocation.parse(store, passwordFile: password.file)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// Opens the store (read-only, or creating and migrating it for a
    /// command that writes); bad input (exit status 2) when it cannot be.
    func open(_ access: HistoryAccess) async throws -> any HistoryStore {
        do {
            let location = try HistoryLocation.parse(store, passwordFile: password.file)
            return try await openStore(location, access: access)
        } catch let error as HistoryError {
            throw CommandFailure.badInput(error.message)
        }
    }
}

/// Opens the store at `location`; a store that a writing command creates
/// is announced on standard error (`strobe: created the history store
/// PATH`), so that a mistyped path does not go unnoticed.
func openStore(_ location: HistoryLocation, access: HistoryAccess) async throws -> any HistoryStore & FleetStore {
    var isNew = false
    if access == .readWrite, case .sqlite(let path) = location { isNew = !FileManager.default.fileExists(atPath: path) }
    let store = try await HistoryStores.open(location, access: access)
    if isNew { StrobeCommand.printError("strobe: created the history store \(location)") }
    return store
}

/// Adds the results files under `paths` to the store and prints `N added,
/// M already stored`; with `recognizeComparisons`, the baseline and
/// candidate directories of a `strobe compare` output are recorded as its
/// sides. Every file is read before anything is stored: one that cannot be
/// is bad input (exit status 2).
func addToHistory(_ paths: [String], recognizeComparisons: Bool = false, options: HistoryStoreOptions) async throws {
    let entries: [HistoryInput.Entry]
    do {
        entries = try HistoryInput.load(paths, recognizeComparisons: recognizeComparisons)
    } catch {
        throw CommandFailure.badInput(error.message)
    }
    let store = try await options.open(.readWrite)
    do {
        let counts = try await HistoryWriter.add(entries.map(\.record), to: store)
        await store.close()
        print("\(counts) (\(store.location))")
    } catch let error as HistoryError {
        await store.close()
        throw CommandFailure.badInput(error.message)
    }
}

/// `strobe history add RESULTS...`.
struct HistoryAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add results files (or directories of them) to the store.",
        discussion: """
            Every file is read before anything is stored: a file that does not parse stops the command \
            with nothing stored, and so does a metric whose unit differs from the unit stored for it. \
            Each run is then added in a transaction of its own; a run already stored is left as it is.
            """
    )

    @Argument(help: "Results files, or directories searched for .strobe-results files.")
    var results: [String]

    @OptionGroup var options: HistoryStoreOptions

    func run() async throws {
        try await addToHistory(results, options: options)
    }
}

/// `strobe history import DIR...`.
struct HistoryImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import existing results directories into the store.",
        discussion: """
            Adds every .strobe-results file under each DIR, as `history add` does. Runs in the \
            baseline/ and candidate/ directories of a `strobe compare` output are recorded as the sides \
            of one comparison.
            """
    )

    @Argument(help: "Results directories.")
    var directories: [String]

    @OptionGroup var options: HistoryStoreOptions

    func validate() throws {
        for directory in directories {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), !isDirectory.boolValue {
                throw ValidationError("\(directory) is a file; import takes directories (add takes files)")
            }
        }
    }

    func run() async throws {
        try await addToHistory(directories, recognizeComparisons: true, options: options)
    }
}

/// `strobe history export`.
struct HistoryExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write runs from the store back out, as results files or as CSV.",
        discussion: """
            --where KEY=VALUE keeps the runs whose KEY (suite, branch, host, commit, or a tag) is VALUE; \
            give it more than once to require all. results writes a .strobe-results file per run into \
            the --output directory (adding them back stores nothing new); csv writes one file, a row per \
            sample, as `strobe results export` does, with the runs' commit, branch and time.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case results, csv
    }

    @OptionGroup var options: HistoryStoreOptions

    @Option(
        name: .customLong("where"), help: "KEY=VALUE: only runs whose suite, branch, host, commit or tag KEY is VALUE.")
    var filters: [String] = []

    @Option(help: "results or csv.")
    var format: Format

    @Option(name: .shortAndLong, help: "The directory (results) or file (csv) to write.")
    var output: String

    func validate() throws {
        for filter in filters {
            do { _ = try HistoryFilter(parsing: filter) } catch { throw ValidationError(error.message) }
        }
    }

    func run() async throws {
        let query = HistoryQuery(filters: try filters.map { try HistoryFilter(parsing: $0) }, includeSamples: true)
        let store = try await options.open(.readOnly)
        let runs: [HistoryRun]
        do {
            runs = try await store.runs(query)
            await store.close()
        } catch let error as HistoryError {
            await store.close()
            throw CommandFailure.badInput(error.message)
        }
        switch format {
        case .results:
            do {
                let files = try HistoryExport.writeResults(runs, to: output)
                print("\(files.count) runs written to \(output)")
            } catch {
                throw CommandFailure.badInput(error.message)
            }
        case .csv:
            try emit(HistoryExport.csv(runs), to: output)
            print("\(runs.count) runs written to \(output)")
        }
    }
}
