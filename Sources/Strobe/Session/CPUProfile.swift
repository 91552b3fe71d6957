#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CPU profiling: the session samples the user call stack of each thread
/// while it runs on a CPU, and writes the samples into the trace beside the
/// intervals, where Perfetto shows them as a callstack track per thread
/// (select an area for a flame graph) and `strobe summarize --profile`
/// reads them.
///
/// ```swift
/// var configuration = TraceConfiguration(outputPath: "/tmp/app.pftrace")
/// configuration.cpuProfile = .init(frequency: 999)
/// ```
///
/// Linux only. The kernel samples where it lets the process open perf
/// events on its own threads (the software CPU clock; no hardware counter
/// is needed); where it refuses (seccomp, `perf_event_paranoid` above 2),
/// a CPU-time timer per thread interrupts it and walks its frame pointers.
/// The trace names the method that ran. Stacks walk through code built
/// with frame pointers, as Swift's release builds on Linux mostly are.
/// With the kernel's method every thread of the process is sampled; with
/// the timer, the threads that record into the session and the one that
/// started it.
extension TraceConfiguration {
    /// How often, and how, the session samples call stacks.
    public struct CPUProfile: Sendable, Hashable {
        /// Which sampling method the session uses.
        public enum Method: Sendable, Hashable {
            /// The kernel's perf events where the system allows them, else
            /// the CPU-time timer.
            case automatic
            /// The CPU-time timer and its frame-pointer walk, even where perf
            /// events are allowed.
            case cpuTimer
        }

        /// Samples per second of each thread's CPU time, from 1 to 10,000.
        /// Default: 999 (an odd rate, so sampling does not lock step with
        /// work on a millisecond timer).
        public var frequency: Int

        /// The sampling method. Default: automatic.
        public var method: Method

        /// A profile sampling `frequency` times per second of CPU time.
        public init(frequency: Int = 999, method: Method = .automatic) {
            self.frequency = frequency
            self.method = method
        }

        /// The CPU time between two samples of a thread, in nanoseconds.
        package var periodNanoseconds: UInt64 { UInt64(1_000_000_000 / max(frequency, 1)) }

        /// Why the profile cannot run, or nil.
        var problem: String? {
            guard (1...10_000).contains(frequency) else {
                return "cpuProfile.frequency must be from 1 to 10000 samples per second, not \(frequency)"
            }
            return nil
        }

        /// The environment variable that turns profiling on for a session
        /// started from the environment: a rate such as `999hz`, optionally
        /// followed by `,timer` to use the CPU-time timer.
        package static let environmentVariable = "STROBE_CPU_PROFILE"

        /// The profile this process's `STROBE_CPU_PROFILE` asks for, or nil
        /// when it is unset or empty; the runner applies it to the sessions
        /// of iterations that keep their trace.
        package static func fromProcessEnvironment() throws(TraceSessionError) -> CPUProfile? {
            guard let value = getenv(environmentVariable), value.pointee != 0 else { return nil }
            return try fromEnvironment(String(cString: value))
        }

        /// The profile `STROBE_CPU_PROFILE` asks for: `999hz`, `100hz,timer`;
        /// `on` for the default rate.
        static func fromEnvironment(_ text: String) throws(TraceSessionError) -> CPUProfile {
            let parts = text.split(separator: ",").map { String($0.filter { !$0.isWhitespace }).lowercased() }
            var profile = CPUProfile()
            let problem = TraceSessionError.invalidConfiguration(
                "\(environmentVariable)=\(text): expected a rate such as 999hz, optionally followed by ,timer")
            guard let rate = parts.first, parts.count <= 2 else { throw problem }
            if rate != "on" {
                guard rate.hasSuffix("hz"), let frequency = Int(rate.dropLast(2)) else { throw problem }
                profile.frequency = frequency
            }
            if parts.count == 2 {
                guard parts[1] == "timer" else { throw problem }
                profile.method = .cpuTimer
            }
            if let message = profile.problem {
                throw .invalidConfiguration("\(environmentVariable)=\(text): \(message)")
            }
            return profile
        }
    }
}
