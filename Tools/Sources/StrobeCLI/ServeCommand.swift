import ArgumentParser
import Foundation
import StrobeFleet
import StrobeHistory
import StrobeServe

/// `strobe serve`: the fleet's ingest endpoint over HTTP.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Accept traces over HTTP into the store, for strobe fleet.",
        discussion: """
            POST a trace's bytes to /v1/traces with the header Authorization: Bearer TOKEN (and optionally \
            X-Strobe-Trace-Name: NAME). The answer is JSON: 200 {"id", "stored": "added" or "already stored"}, \
            400 {"error"} for a damaged or foreign trace, 401 without the token, 413 over --max-bytes; nothing \
            is stored unless the answer is 200. The token comes from --token-file (its first line) or the \
            STROBE_INGEST_TOKEN environment variable. The server keeps no state: several can serve one \
            PostgreSQL store. SIGINT or SIGTERM stops it after the requests in flight.
            """
    )

    @OptionGroup var history: HistoryStoreOptions

    @Option(help: "HOST:PORT to listen on (port 0 picks a free one).")
    var listen = "127.0.0.1:8080"

    @Option(name: .customLong("token-file"), help: "A file whose first line is the token clients must send.")
    var tokenFile: String?

    @Option(name: .customLong("max-bytes"), help: "The largest trace accepted, in bytes (default 64 MiB).")
    var maxBytes = 64 << 20

    /// The host and port of `--listen`, or nil.
    var address: (host: String, port: Int)? {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
            (0...65535).contains(port), colon != listen.startIndex
        else { return nil }
        return (String(listen[..<colon]), port)
    }

    func validate() throws {
        if address == nil { throw ValidationError("--listen \(listen): expected HOST:PORT, such as 127.0.0.1:8080") }
        if maxBytes < 1 { throw ValidationError("--max-bytes must be at least 1, not \(maxBytes)") }
    }

    /// The token, from the file or the environment.
    func token() throws -> String {
        if let tokenFile {
            guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
                throw CommandFailure.badInput("--token-file \(tokenFile): cannot read it")
            }
            let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
            guard !line.isEmpty else { throw CommandFailure.badInput("--token-file \(tokenFile): its first line is empty") }
            return line
        }
        guard let token = ProcessInfo.processInfo.environment["STROBE_INGEST_TOKEN"], !token.isEmpty else {
            throw CommandFailure.badInput("give the token clients must send: --token-file FILE or STROBE_INGEST_TOKEN")
        }
        return token
    }

    func run() async throws {
        var settings = FleetIngestServer.Settings(token: try token())
        settings.maximumBytes = maxBytes
        let location: HistoryLocation
        do {
            location = try HistoryLocation.parse(history.store, passwordFile: history.passwordFile)
        } catch {
            throw CommandFailure.badInput(error.message)
        }
        let store: any FleetStore
        do {
            store = try await FleetStores.open(location)
        } catch let error as HistoryError {
            throw CommandFailure.badInput(error.message)
        }
        let (host, port) = address!
        do {
            try await FleetIngestServer.run(store: store, settings: settings, host: host, port: port) { port in
                print("strobe serve: listening on http://\(host):\(port)\(FleetIngestServer.path) (\(location))")
                fflush(nil)
            }
        } catch {
            await store.close()
            throw CommandFailure.badInput("cannot serve on \(listen): \(error)")
        }
        await store.close()
    }
}
