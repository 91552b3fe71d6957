import ArgumentParser
import Foundation
import StrobeReader

#if Server
import StrobeOTLP
#endif

/// `--otlp-endpoint URL` and its batch and retry flags, shared by `export`
/// and `ingest`.
struct OTLPEndpointOptions: ParsableArguments {
    @Option(
        name: .customLong("otlp-endpoint"),
        help: ArgumentHelp(
            "Send the spans over OTLP/HTTP (protobuf) to this http:// URL, posted to as given, "
                + "e.g. http://127.0.0.1:4318/v1/traces.",
            valueName: "url"))
    var url: String?

    @Option(
        name: .customLong("otlp-batch-bytes"),
        help: "With --otlp-endpoint, the largest request body (a span larger than that goes alone).")
    var batchBytes: Int = OTLPRequests.defaultMaxBytes

    @Option(
        name: .customLong("otlp-attempts"),
        help: "With --otlp-endpoint, attempts per batch on 429, 502, 503, 504 or a failed connection.")
    var attempts: Int = 5

    func validate() throws {
        if batchBytes < 1024 { throw ValidationError("--otlp-batch-bytes must be at least 1024, not \(batchBytes)") }
        if attempts < 1 { throw ValidationError("--otlp-attempts must be at least 1, not \(attempts)") }
        if let url {
            #if Server
            do {
                _ = try OTLPEndpoint(parsing: url)
            } catch {
                throw ValidationError(error.description)
            }
            #else
            _ = url
            throw ValidationError(LeanBuild.missing("--otlp-endpoint"))
            #endif
        }
    }
    #if Server

    /// The sender, when `--otlp-endpoint` is given.
    func sender() throws(CommandFailure) -> OTLPSender? {
        guard let url else { return nil }
        do {
            return OTLPSender(
                endpoint: try OTLPEndpoint(parsing: url), retry: OTLPSender.RetryPolicy(attempts: attempts))
        } catch {
            throw .badInput(error.description)
        }
    }
    #endif
}

#if Server
extension OTLPSender {
    /// Sends the requests of `stream`, the export of the trace file at
    /// `path`, as they are made; warnings go to standard error.
    func send(
        _ stream: inout OTLPStream, from path: String, alongside: ([UInt8]) throws -> Void = { _ in }
    ) async throws -> Report {
        try await send(&stream, of: path, alongside: alongside) { warning in
            StrobeCommand.printError("strobe: warning: \(warning)")
        }
    }
}

extension CommandFailure {
    /// The failure of a send, exit status 2 whatever its kind (the endpoint
    /// refused the trace, or stayed busy or unreachable through every
    /// attempt): the spans could not be delivered, which a CI step must
    /// not take for a regression (1).
    static func otlp(_ error: OTLPSendError) -> CommandFailure {
        CommandFailure(message: error.description, status: 2)
    }
}
#endif
