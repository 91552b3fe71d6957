extension TraceConfiguration {
    /// Where events are announced besides the trace file, so that system
    /// profilers show a session's intervals next to their own data.
    ///
    /// Signposts are off by default and cost nothing then. Turned on, every
    /// `begin`, `end`, counter and instant leaves the inlined fast path for one
    /// that also announces the event, so prefer them for investigations rather
    /// than for every production session.
    ///
    /// ```swift
    /// var configuration = TraceConfiguration(outputPath: "app.pftrace")
    /// configuration.signposts = [.probes]   // attach with perf or bpftrace
    /// ```
    public struct Signposts: OptionSet, Sendable, Hashable {
        /// The raw bits of the set.
        public let rawValue: UInt8

        /// A set from its raw bits.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// USDT probes of the provider `strobe` (Linux), for `perf probe`,
        /// `perf record` and `bpftrace`: `begin`, `end`, `instant`, `counter`,
        /// `counter_f64`, `async_begin` and `async_end`.
        ///
        /// A probe is a single `nop` until a tool attaches to it. The probes
        /// and their arguments are listed in docs/recording.md.
        public static let probes = Signposts(rawValue: 1 << 0)

        /// Lines in the kernel's ftrace `trace_marker` file, in the format
        /// system-wide Perfetto and ftrace captures show beside scheduling:
        /// `B|pid|name`, `E|pid`, `C|pid|name|value`, `I|pid|name`, and
        /// `S|pid|name|cookie` / `F|pid|name|cookie` for async intervals.
        ///
        /// Each event is a system call of a few microseconds, so this suits
        /// short investigations only. The session fails to start when the
        /// file cannot be opened for writing; see
        /// ``TraceConfiguration/ftraceMarkerPath``.
        public static let ftraceMarker = Signposts(rawValue: 1 << 1)

        /// `os_signpost` intervals and events (Apple platforms), shown by
        /// Instruments' Points of Interest. Ignored where `os` is unavailable.
        // swift-format-ignore: DontRepeatTypeInStaticProperties
        public static let osSignposts = Signposts(rawValue: 1 << 2)

        /// The signposts this build and machine can deliver: probes where the
        /// build carries USDT notes, the ftrace marker where tracefs offers a
        /// writable `trace_marker`, `os_signpost` on Apple platforms.
        public static var available: Signposts {
            var result: Signposts = []
            if SignpostEmitter.probesAvailable { result.insert(.probes) }
            if FtraceMarker.defaultPath() != nil { result.insert(.ftraceMarker) }
            #if canImport(os)
            result.insert(.osSignposts)
            #endif
            return result
        }

        /// Parses a comma-separated list such as `probes,ftrace-marker`
        /// (`os-signposts` names the third kind; `all` all three), or returns
        /// nil naming nothing it knows.
        package init?(list: String) {
            var result: Signposts = []
            for item in list.split(separator: ",") {
                switch item.trimmingWhitespace() {
                case "probes", "usdt": result.insert(.probes)
                case "ftrace-marker", "trace_marker", "ftrace": result.insert(.ftraceMarker)
                case "os-signposts", "os_signpost": result.insert(.osSignposts)
                case "all": result.formUnion([.probes, .ftraceMarker, .osSignposts])
                default: return nil
                }
            }
            self = result
        }
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var result = self
        while let first = result.first, first.isWhitespace { result.removeFirst() }
        while let last = result.last, last.isWhitespace { result.removeLast() }
        return result
    }
}
