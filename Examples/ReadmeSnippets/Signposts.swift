// docs/recording.md: "Signposts for system profilers".
import Strobe

func chooseSignposts() -> TraceConfiguration {
    var configuration = TraceConfiguration()
    configuration.signposts = [.probes] // USDT probes for perf and bpftrace
    configuration.signposts = [.ftraceMarker] // lines in tracefs's trace_marker
    configuration.signposts = [.osSignposts] // Instruments' Points of Interest (Apple platforms)
    return configuration
}
