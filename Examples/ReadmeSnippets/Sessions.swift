// docs/recording.md: "Sessions".
import Strobe

func startASession() throws -> TraceSession {
    var configuration = TraceConfiguration(outputPath: "/tmp/app.pftrace")
    configuration.bufferSizePerThread = 8 << 20 // per-thread cap, taken in 64 KiB chunks as needed
    configuration.whenBufferFull = .discardNewest // or .overwriteOldest: a flight recorder
    configuration.samplingProbability = 0.01 // record 1 session in 100, decided at start
    let session = try TraceSession.start(configuration)
    return session
}
