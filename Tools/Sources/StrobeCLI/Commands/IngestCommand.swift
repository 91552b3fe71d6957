import ArgumentParser
import Foundation
import StrobeFleet
import StrobeHistory
import StrobeHistoryStore

/// `strobe ingest TRACE_OR_DIR... --history STORE`: a fleet's traces into the
/// store, for `strobe fleet`.
struct IngestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Add traces from a fleet of devices to the store, for strobe fleet.",
        discussion: """
            Each trace is read on all cores; the store keeps, per interval name and per counter, the count, the \
            total and a quantile sketch of the values, keyed by the trace's metadata (TraceConfiguration.metadata: \
            app.version, device.model, ...). A trace is stored once, under the SHA-256 of its bytes, so ingesting \
            it again changes nothing. A damaged or foreign file is skipped, named on standard error with the \
            reason, and counted in the summary line; the exit status stays 0 while any trace was stored, and is 2 \
            when every file was skipped. A path that does not exist is bad input (exit status 2) and nothing is \
            ingested.
            """
    )

    @Argument(help: "Trace files, or directories whose every file (hidden ones left out) is a trace.")
    var paths: [String]

    @OptionGroup var history: HistoryStoreOptions

    @Option(help: "Traces stored per transaction.")
    var batch: Int = 64

    func validate() throws {
        if batch < 1 { throw ValidationError("--batch must be at least 1, not \(batch)") }
    }

    func run() async throws {
        let files: [String]
        do {
            files = try FleetIngestion.traceFiles(in: paths)
        } catch {
            throw CommandFailure.badInput(error.description)
        }
        let location: HistoryLocation
        do {
            location = try HistoryLocation.parse(history.store, passwordFile: history.passwordFile)
        } catch {
            throw CommandFailure.badInput(error.message)
        }
        let store: any FleetStore
        do {
            store = try await openStore(location, access: .readWrite)
        } catch let error as HistoryError {
            throw CommandFailure.badInput(error.message)
        }
        let summary: FleetIngestion.Summary
        do {
            summary = try await FleetIngestion.ingest(files: files, into: store, batchSize: batch)
        } catch let error as HistoryError {
            await store.close()
            throw CommandFailure.badInput(error.message)
        }
        await store.close()
        for refusal in summary.refused { StrobeCommand.printError("strobe ingest: skipped \(refusal)") }
        print("\(summary) (\(location))")
        if summary.added + summary.alreadyStored == 0, !summary.refused.isEmpty {
            throw CommandFailure.badInput(
                summary.files == 1
                    ? "the one file given is not a trace that can be stored"
                    : "none of the \(summary.files) files is a trace that can be stored")
        }
    }
}
