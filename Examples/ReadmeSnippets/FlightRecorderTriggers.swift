// docs/recording.md: "Flight-recorder triggers".
import Strobe

func startAFlightRecorder() throws -> TraceSession {
    var configuration = TraceConfiguration()
    configuration.whenBufferFull = .overwriteOldest
    configuration.flightRecorder = .init(
        directory: "/var/tmp/app-traces", before: .seconds(10), after: .seconds(2),
        minimumSpacing: .seconds(60), maximumFiles: 10, maximumBytes: 512 << 20)
    configuration.triggers = [
        .interval("frame", longerThan: .milliseconds(33)),
        .counter("queue.depth", above: 100),
    ]
    let session = try TraceSession.start(configuration)
    session.trigger("checkout failed") // from anywhere, returns at once
    return session
}
