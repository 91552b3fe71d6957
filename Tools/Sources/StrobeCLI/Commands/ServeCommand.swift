#if Server
import ArgumentParser
import Foundation
import StrobeFleet
import StrobeHistory
import StrobeHistoryStore
import StrobeServer

/// `strobe serve --history STORE --listen ADDR`: the ingest endpoint.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Accept traces over HTTP and store them for strobe fleet.",
        discussion: """
            POST a trace's bytes to /v1/traces with 'Authorization: Bearer TOKEN' (and optionally \
            'X-Strobe-Trace-Name: NAME'). Answers: 201 stored, 200 already stored (the same bytes; nothing \
            changes), 401 no or wrong token, 413 over --max-trace-bytes, 422 not a trace or a damaged one (the \
            JSON reason names the byte offset), 503 the store failed (send again). GET /v1/health answers 200. \
            The token comes from --token-file or the STROBE_SERVE_TOKEN environment variable, never from the \
            command line. The server keeps no state of its own: run several behind a load balancer in front of \
            one PostgreSQL store. It prints 'strobe serve: listening on HOST:PORT' once it accepts uploads and \
            stops on SIGINT or SIGTERM after the uploads under way.
            """
    )

    @OptionGroup var history: HistoryStoreOptions

    @Option(help: "HOST:PORT to listen on; port 0 picks a free one.")
    var listen: String = "127.0.0.1:8080"

    @Option(help: "A file holding the bearer token uploads must carry (else STROBE_SERVE_TOKEN).")
    var tokenFile: String?

    @Option(help: "The largest trace accepted, in bytes.")
    var maxTraceBytes: Int = IngestServerConfiguration.defaultMaximumTraceBytes

    func validate() throws {
        if maxTraceBytes < 1 { throw ValidationError("--max-trace-bytes must be at least 1, not \(maxTraceBytes)") }
    }

    func run() async throws {
        let configuration: IngestServerConfiguration
        do {
            let (host, port) = try IngestServerConfiguration.listenAddress(parsing: listen)
            configuration = IngestServerConfiguration(
                host: host, port: port, token: try token(), maximumTraceBytes: maxTraceBytes)
        } catch {
            throw CommandFailure.badInput(error.message)
        }
        let location: HistoryLocation
        let store: any FleetStore
        do {
            location = try HistoryLocation.parse(history.store, passwordFile: history.password.file)
            store = try await openStore(location, access: .readWrite)
        } catch let error as HistoryError {
            throw CommandFailure.badInput(error.message)
        }
        let server = IngestServer(configuration: configuration, store: store)
        do {
            try await server.run { port in
                // Unbuffered, so a script waiting for the line sees it now.
                FileHandle.standardOutput.write(
                    Data("strobe serve: listening on \(configuration.host):\(port), storing into \(location)\n".utf8))
            }
        } catch {
            await store.close()
            throw CommandFailure.badInput("cannot serve on \(listen): \(error)")
        }
        await store.close()
        print("strobe serve: stopped; \(server.currentCounts)")
    }

    private func token() throws(IngestServerError) -> BearerToken {
        if let tokenFile { return try BearerToken.read(file: tokenFile) }
        guard let text = ProcessInfo.processInfo.environment["STROBE_SERVE_TOKEN"] else {
            throw IngestServerError("no token: give --token-file FILE or set STROBE_SERVE_TOKEN")
        }
        return try BearerToken(text, origin: "STROBE_SERVE_TOKEN")
    }
}
#endif
