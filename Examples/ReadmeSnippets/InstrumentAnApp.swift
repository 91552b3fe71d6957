// README.md ("The tracing SDK") and docs/recording.md ("Instrument an app").
import Strobe

func startUp() throws {
    let session = try TraceSession.start(TraceConfiguration(outputPath: "app.pftrace"))
    Trace.interval("app startup") {
        Trace.begin("load model") // nested, on any thread
        loadModel()
        Trace.end()
        Trace.counter("cache entries", cache.count)
    }
    Trace.interval("lens apply", capturing: .resourceUsage) { applyLens() } // busy or blocked?
    Trace.instant("frame dropped", arguments: ["frame": 42, "reason": "late"])
    try session.stop()
}

func showPhoto() async throws -> Photo {
    try await Trace.interval("fetch photo") { try await fetch() } // may hop threads
}
