import ArgumentParser
import Foundation
import StrobeFleet
import StrobeHistory
import StrobeHistoryStore
import StrobeReader

#if Server
import StrobeOTLP
#endif

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
            ingested. With --otlp-endpoint the traces are sent as OTLP spans (as `strobe export --format otlp` \
            writes them) to that OTLP/HTTP endpoint instead of the store, one after another, in batches, with \
            retries; a trace the endpoint refuses is named on standard error and the rest are still sent (exit \
            status 2 at the end), and an endpoint busy or unreachable through every attempt stops the command \
            (exit status 2 too: every failure to deliver is 2), naming the trace, the batch and what was not sent.
            """
    )

    @Argument(help: "Trace files, or directories whose every file (hidden ones left out) is a trace.")
    var paths: [String]

    @OptionGroup var history: HistoryStoreOptions

    @Option(help: "Traces stored per transaction.")
    var batch: Int = 64

    @OptionGroup var otlp: OTLPEndpointOptions

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
        #if Server
        if let sender = try otlp.sender() {
            try await send(files, with: sender)
            return
        }
        #endif
        let location: HistoryLocation
        do {
            location = try HistoryLocation.parse(history.store, passwordFile: history.password.file)
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

    #if Server
    /// Sends every trace of `files` to the endpoint, in order.
    private func send(_ files: [String], with sender: OTLPSender) async throws {
        var total = OTLPSender.Report()
        var sent = 0
        var skipped = 0
        var refused: [String] = []
        for (index, file) in files.enumerated() {
            var stream: OTLPStream
            do {
                stream = try OTLPStream(contentsOf: file, maxBytes: otlp.batchBytes)
            } catch {
                StrobeCommand.printError("strobe ingest: skipped \(error)")
                skipped += 1
                continue
            }
            if let failure = stream.scan.notATrace {
                StrobeCommand.printError("strobe ingest: skipped \(failure.description)")
                skipped += 1
                continue
            }
            if let truncation = stream.scan.truncation {
                StrobeCommand.printError("strobe: warning: \(truncation); sending what came before")
            }
            do {
                let report = try await sender.send(&stream, from: file)
                total.batches += report.batches
                total.spans += report.spans
                total.retries += report.retries
                total.rejectedSpans += report.rejectedSpans
                sent += 1
            } catch let error as OTLPSendError {
                guard !error.isRefusal else {
                    StrobeCommand.printError("strobe ingest: \(error)")
                    refused.append(file)
                    continue
                }
                let rest = files.count - index - 1
                throw CommandFailure.badInput(
                    "\(error)" + (rest > 0 ? "; \(rest) more trace\(rest == 1 ? "" : "s") not sent" : ""))
            }
        }
        var line =
            "sent \(total.spans) spans of \(sent) trace\(sent == 1 ? "" : "s") in \(total.batches) "
            + "request\(total.batches == 1 ? "" : "s") to \(sender.endpoint)"
        if total.retries > 0 { line += ", \(total.retries) retried" }
        if total.rejectedSpans > 0 { line += ", \(total.rejectedSpans) spans rejected by the endpoint" }
        if skipped > 0 { line += ", \(skipped) skipped" }
        if !refused.isEmpty { line += ", \(refused.count) refused" }
        print(line)
        if !refused.isEmpty {
            throw CommandFailure.badInput(
                "the endpoint refused \(refused.count) trace\(refused.count == 1 ? "" : "s"): "
                    + refused.joined(separator: ", "))
        }
        if sent == 0, skipped > 0 {
            throw CommandFailure.badInput(
                files.count == 1
                    ? "the one file given is not a trace that can be sent"
                    : "none of the \(files.count) files is a trace that can be sent")
        }
    }
    #endif
}
