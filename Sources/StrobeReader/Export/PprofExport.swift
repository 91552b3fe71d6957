import StrobeFormatting

/// A trace's CPU samples as a pprof `Profile` (perftools.profiles), the
/// format `go tool pprof` reads: uncompressed protobuf bytes, which a
/// caller gzips to write a `.pb.gz` file.
///
/// Each distinct call stack of each thread is one pprof sample with two
/// values, `samples/count` and `cpu/nanoseconds` (the count times the
/// period, one second over the sampling rate), and the labels `thread` and
/// `thread_id`. Every frame is a location with its mapping (path, build id,
/// address range and file offset) and its address in the process, so a
/// symbolizer can resolve it again; each location's one line names the
/// frame's function.
///
/// ```swift
/// let profile = try CPUProfile.read(contentsOf: "app.pftrace")
/// let bytes = PprofExport.encode(profile, threads: trace.threads)
/// ```
public enum PprofExport {
    /// The pprof bytes of `samples` (all of `profile`'s when nil).
    ///
    /// - Parameters:
    ///   - profile: the profile the samples, stacks, frames and mappings
    ///     come from.
    ///   - samples: the samples to export, such as those of
    ///     ``CPUProfile/samples(within:)``.
    ///   - threads: the trace's threads, which name the `thread` label.
    ///   - timeNanos: when the profile started, in Unix nanoseconds, when
    ///     the caller knows it; the field is left out otherwise.
    public static func encode(
        _ profile: CPUProfile, samples: [CPUProfile.Sample]? = nil, threads: [TraceThread] = [],
        timeNanos: Int64? = nil
    ) -> [UInt8] {
        var counts = SampleCounts()
        for sample in samples ?? profile.samples { counts.add(sample) }
        return encode(profile, counts: counts, threads: threads, timeNanos: timeNanos)
    }

    /// The pprof bytes of samples already counted by stack and thread.
    static func encode(
        _ profile: CPUProfile, counts: SampleCounts, threads: [TraceThread], timeNanos: Int64?
    ) -> [UInt8] {
        // The string table: index 0 is the empty string, each text once.
        var strings = UniqueTexts(startingWith: [""])
        var writer = ProtobufWriter()
        let period: UInt64? = profile.frequency.flatMap { $0 > 0 ? 1_000_000_000 / UInt64($0) : nil }

        // sample_type: a count, and CPU time where the rate is known.
        writeValueType(&writer, field: Field.sampleType, "samples", "count", &strings)
        if period != nil { writeValueType(&writer, field: Field.sampleType, "cpu", "nanoseconds", &strings) }

        // Samples, one per thread and distinct stack.
        let names = Dictionary(threads.map { ($0.tid, $0.name) }, uniquingKeysWith: { first, _ in first })
        var usedFrames = Set<Int>()
        for key in counts.order {
            let frames = profile.frameStacks.indices.contains(key.frameStack) ? profile.frameStacks[key.frameStack] : []
            usedFrames.formUnion(frames)
            let count = UInt64(counts.counts[key] ?? 0)
            writer.message(Field.sample) { sample in
                // Leaf first.
                sample.packed(SampleField.locationID, frames.reversed().map { UInt64($0) + 1 })
                sample.packed(SampleField.value, period.map { [count, count * $0] } ?? [count])
                if let name = names[key.tid], !name.isEmpty {
                    let text = Int64(strings.index(of: name))
                    sample.message(SampleField.label) { label in
                        label.int64(LabelField.key, Int64(strings.index(of: "thread")))
                        label.int64(LabelField.str, text)
                    }
                }
                sample.message(SampleField.label) { label in
                    label.int64(LabelField.key, Int64(strings.index(of: "thread_id")))
                    label.int64(LabelField.num, key.tid)
                }
            }
        }

        // Mappings, locations and functions of the frames used.
        let frames = usedFrames.sorted()
        // pprof takes the first mapping for the program's: the one holding
        // `main` goes first, else the first that is no shared library.
        let used = Set(frames.compactMap { profile.frames[$0].mapping })
        let main =
            frames.first { profile.functions[profile.frames[$0].function] == "main" }
            .flatMap { profile.frames[$0].mapping }
            ?? used.sorted().first { !profile.mappings[$0].path.contains(".so") }
        let mappings = used.sorted {
            ($0 == main ? 0 : 1, $0) < ($1 == main ? 0 : 1, $1)
        }
        for index in mappings {
            let mapping = profile.mappings[index]
            writer.message(Field.mapping) { message in
                message.varint(MappingField.id, UInt64(index) + 1)
                message.varint(MappingField.memoryStart, mapping.start)
                message.varint(MappingField.memoryLimit, mapping.end)
                message.varint(MappingField.fileOffset, mapping.fileOffset)
                message.int64(MappingField.filename, Int64(strings.index(of: mapping.path)))
                message.int64(MappingField.buildID, Int64(strings.index(of: mapping.buildID)))
                message.varint(MappingField.hasFunctions, 1)
            }
        }
        for index in frames {
            let frame = profile.frames[index]
            writer.message(Field.location) { location in
                location.varint(LocationField.id, UInt64(index) + 1)
                if let mapping = frame.mapping {
                    location.varint(LocationField.mappingID, UInt64(mapping) + 1)
                    location.varint(LocationField.address, address(of: frame, in: profile.mappings[mapping]))
                } else {
                    location.varint(LocationField.address, frame.relativePC)
                }
                location.message(LocationField.line) { line in
                    line.varint(LineField.functionID, UInt64(frame.function) + 1)
                }
            }
        }
        for function in Set(frames.map { profile.frames[$0].function }).sorted() {
            let name = Int64(strings.index(of: profile.functions[function]))
            writer.message(Field.function) { message in
                message.varint(FunctionField.id, UInt64(function) + 1)
                message.int64(FunctionField.name, name)
                message.int64(FunctionField.systemName, name)
            }
        }

        // Times, the period, and last the strings every field above named.
        if let timeNanos { writer.int64(Field.timeNanos, timeNanos) }
        if let first = counts.firstTime, let last = counts.lastTime {
            writer.int64(Field.durationNanos, Int64(clamping: last - first))
        }
        if let period {
            writeValueType(&writer, field: Field.periodType, "cpu", "nanoseconds", &strings)
            writer.int64(Field.period, Int64(clamping: period))
        } else {
            writeValueType(&writer, field: Field.periodType, "samples", "count", &strings)
            writer.int64(Field.period, 1)
        }
        for text in strings.texts { writer.string(Field.stringTable, text) }
        return writer.bytes
    }

    /// The frame's address in the process: its file offset moved to where
    /// the mapping holds that offset (the offset itself when the trace
    /// gives no address range).
    static func address(of frame: CPUProfile.Frame, in mapping: CPUProfile.Mapping) -> UInt64 {
        guard mapping.start != 0 || mapping.end != 0 else { return frame.relativePC }
        return mapping.start &+ frame.relativePC &- mapping.fileOffset
    }

    private static func writeValueType(
        _ writer: inout ProtobufWriter, field: UInt32, _ type: String, _ unit: String, _ strings: inout UniqueTexts
    ) {
        let typeIndex = Int64(strings.index(of: type))
        let unitIndex = Int64(strings.index(of: unit))
        writer.message(field) { valueType in
            valueType.int64(1, typeIndex)
            valueType.int64(2, unitIndex)
        }
    }

    /// Samples counted by frame stack and thread, in the order each pair
    /// first came: what the export writes, in memory that grows with the
    /// distinct stacks, not with the samples.
    struct SampleCounts {
        struct Key: Hashable {
            var frameStack: Int
            var tid: Int64
        }

        private(set) var counts: [Key: Int] = [:]
        private(set) var order: [Key] = []
        private(set) var firstTime: UInt64?
        private(set) var lastTime: UInt64?
        /// Samples counted.
        private(set) var total = 0

        mutating func add(_ sample: CPUProfile.Sample) {
            add(frameStack: sample.frameStack, tid: sample.tid, time: sample.time)
        }

        mutating func add(frameStack: Int, tid: Int64, time: UInt64) {
            let key = Key(frameStack: frameStack, tid: tid)
            if let count = counts[key] {
                counts[key] = count + 1
            } else {
                counts[key] = 1
                order.append(key)
            }
            firstTime = Swift.min(firstTime ?? time, time)
            lastTime = Swift.max(lastTime ?? time, time)
            total += 1
        }
    }
}
