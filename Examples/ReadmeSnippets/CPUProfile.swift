// README: "Profile the CPU", a session that samples call stacks.
import Strobe

func startProfiledSession() throws -> TraceSession {
    var configuration = TraceConfiguration(outputPath: "app.pftrace")
    configuration.cpuProfile = .init(frequency: 999) // or STROBE_CPU_PROFILE=999hz
    let session = try TraceSession.start(configuration)
    return session
}
