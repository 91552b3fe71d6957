/// The fields of Perfetto's CPU samples and their interned data
/// (`profile_common.proto`, `perf_events.proto`), written by the SDK's
/// profile encoder and read by the trace reader.
extension PerfettoWire {
    /// `TracePacket` fields of CPU samples.
    public enum ProfilePacket {
        /// `PerfSample perf_sample = 66`.
        @inlinable public static var perfSample: UInt32 { 66 }
        /// `TracePacketDefaults trace_packet_defaults = 59`.
        @inlinable public static var tracePacketDefaults: UInt32 { 59 }
    }

    /// `TracePacketDefaults`, `PerfSampleDefaults` and `PerfEvents.Timebase`:
    /// what a profile's sequence says of all its samples.
    public enum PerfSampleDefaults {
        /// `TracePacketDefaults.perf_sample_defaults = 12`.
        @inlinable public static var field: UInt32 { 12 }
        /// `PerfSampleDefaults.timebase = 1`.
        @inlinable public static var timebase: UInt32 { 1 }
        /// `Timebase.frequency = 2`, samples per second.
        @inlinable public static var frequency: UInt32 { 2 }
        /// `Timebase.counter = 4`, a `PerfEvents.Counter`.
        @inlinable public static var counter: UInt32 { 4 }
        /// `Timebase.timestamp_clock = 11`, a `PerfEvents.PerfClock`.
        @inlinable public static var timestampClock: UInt32 { 11 }
        /// `Timebase.name = 10`.
        @inlinable public static var name: UInt32 { 10 }
        /// `PerfEvents.Counter.SW_CPU_CLOCK`.
        @inlinable public static var softwareCPUClock: UInt64 { 1 }
        /// `PerfEvents.PerfClock.PERF_CLOCK_BOOTTIME`.
        @inlinable public static var boottimeClock: UInt64 { 4 }
    }

    /// `InternedData` fields of CPU samples.
    public enum ProfileInternedData {
        /// `repeated InternedString function_names = 5`.
        @inlinable public static var functionNames: UInt32 { 5 }
        /// `repeated Frame frames = 6`.
        @inlinable public static var frames: UInt32 { 6 }
        /// `repeated Callstack callstacks = 7`.
        @inlinable public static var callstacks: UInt32 { 7 }
        /// `repeated InternedString build_ids = 16`.
        @inlinable public static var buildIDs: UInt32 { 16 }
        /// `repeated InternedString mapping_paths = 17`.
        @inlinable public static var mappingPaths: UInt32 { 17 }
        /// `repeated Mapping mappings = 19`.
        @inlinable public static var mappings: UInt32 { 19 }
    }

    /// `InternedString`.
    public enum InternedString {
        /// `uint64 iid = 1`.
        @inlinable public static var iid: UInt32 { 1 }
        /// `bytes str = 2`.
        @inlinable public static var text: UInt32 { 2 }
    }

    /// `Mapping`.
    public enum Mapping {
        /// `uint64 iid = 1`.
        @inlinable public static var iid: UInt32 { 1 }
        /// `uint64 build_id = 2`, an interned `build_ids` id.
        @inlinable public static var buildID: UInt32 { 2 }
        /// `uint64 start_offset = 3`: the offset Strobe wrote before it
        /// wrote `exact_offset`; still read.
        @inlinable public static var startOffset: UInt32 { 3 }
        /// `uint64 exact_offset = 8`: the file offset `start` maps.
        @inlinable public static var exactOffset: UInt32 { 8 }
        /// `uint64 start = 4`.
        @inlinable public static var start: UInt32 { 4 }
        /// `uint64 end = 5`.
        @inlinable public static var end: UInt32 { 5 }
        /// `repeated uint64 path_string_ids = 7`, interned `mapping_paths`.
        @inlinable public static var pathStringIDs: UInt32 { 7 }
    }

    /// `Frame`.
    public enum Frame {
        /// `uint64 iid = 1`.
        @inlinable public static var iid: UInt32 { 1 }
        /// `uint64 function_name_id = 2`, an interned `function_names` id.
        @inlinable public static var functionNameID: UInt32 { 2 }
        /// `uint64 mapping_id = 3`.
        @inlinable public static var mappingID: UInt32 { 3 }
        /// `uint64 rel_pc = 4`.
        @inlinable public static var relativePC: UInt32 { 4 }
    }

    /// `Callstack`.
    public enum Callstack {
        /// `uint64 iid = 1`.
        @inlinable public static var iid: UInt32 { 1 }
        /// `repeated uint64 frame_ids = 2`, the root first.
        @inlinable public static var frameIDs: UInt32 { 2 }
    }

    /// `PerfSample`.
    public enum PerfSample {
        /// `uint32 cpu = 1`.
        @inlinable public static var cpu: UInt32 { 1 }
        /// `uint32 pid = 2`.
        @inlinable public static var pid: UInt32 { 2 }
        /// `uint32 tid = 3`.
        @inlinable public static var tid: UInt32 { 3 }
        /// `uint64 callstack_iid = 4`.
        @inlinable public static var callstackIID: UInt32 { 4 }
        /// `Profiling.CpuMode cpu_mode = 5`.
        @inlinable public static var cpuMode: UInt32 { 5 }
        /// `uint64 kernel_records_lost = 17`: not a sample but a count of
        /// samples lost, which Perfetto adds to its `perf_cpu_lost_records`
        /// statistic.
        @inlinable public static var kernelRecordsLost: UInt32 { 17 }
        /// `MODE_USER`, the mode of every Strobe sample.
        @inlinable public static var cpuModeUser: UInt64 { 2 }
    }
}
