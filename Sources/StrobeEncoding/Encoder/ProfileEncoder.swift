import PerfettoWire

/// A loaded file that code was sampled in, as the process mapped it.
package struct ProfileMapping: Hashable, Sendable {
    /// The first address of the mapping.
    package var start: UInt64
    /// The address just past it.
    package var end: UInt64
    /// The offset in the file that `start` maps.
    package var fileOffset: UInt64
    /// The file's path (or a name such as `[anon]` for memory with none).
    package var path: String
    /// The file's GNU build id as lowercase hex, empty when it has none.
    package var buildID: String

    package init(start: UInt64, end: UInt64, fileOffset: UInt64, path: String, buildID: String) {
        self.start = start
        self.end = end
        self.fileOffset = fileOffset
        self.path = path
        self.buildID = buildID
    }
}

/// What a program counter resolves to: its function and mapping.
package struct ResolvedFrame: Sendable {
    /// The function's name, demangled; nil when no symbol covers it.
    package var function: String?
    /// The mapping holding it; nil when none does.
    package var mapping: ProfileMapping?
    /// The offset of the function's entry (or of the counter, when the
    /// function is unknown) from the start of the file's mapping, as
    /// Perfetto's `rel_pc`.
    package var relativePC: UInt64

    package init(function: String?, mapping: ProfileMapping?, relativePC: UInt64) {
        self.function = function
        self.mapping = mapping
        self.relativePC = relativePC
    }
}

/// Writes CPU samples as Perfetto's `PerfSample` packets on a sequence of
/// their own, with the mappings, frames, call stacks, function names, build
/// ids and paths interned on that sequence (`InternedData`), as Perfetto's
/// own `traced_perf` writes them; the Perfetto UI shows them as a callstack
/// track per thread.
///
/// Frames are keyed by function and mapping, so the samples of one function
/// share a frame whatever instruction they hit. Each batch's new interned
/// entries go in the packet of its first sample.
package struct ProfileEncoder {
    package let sequenceID: UInt32
    let processID: UInt32
    /// Samples per second, for the sequence's `perf_sample_defaults`.
    let frequency: Int
    private var started = false
    /// Interned strings, by the `InternedData` field that holds them.
    private var strings: [UInt32: [String: UInt64]] = [:]
    private var mappings: [UInt64: UInt64] = [:]
    private var frames: [FrameKey: UInt64] = [:]
    private var framesByPC: [UInt64: UInt64] = [:]
    private var callstacks: [[UInt64]: UInt64] = [:]
    private var nextID: UInt64 = 1
    private var pending = ProtoBuffer(capacity: 1 << 12)
    /// Samples written.
    package private(set) var samples: UInt64 = 0
    /// Samples whose stack ends where a frame could not be unwound.
    package private(set) var truncatedStacks: UInt64 = 0

    private struct FrameKey: Hashable {
        var function: String
        var mapping: UInt64
    }

    package init(sequenceID: UInt32, processID: Int32, frequency: Int = 0) {
        self.sequenceID = sequenceID
        self.processID = UInt32(bitPattern: processID)
        self.frequency = frequency
    }

    /// The sequence's first packet: it clears the incremental state and
    /// gives the defaults of every sample on the sequence, the timebase
    /// (the software CPU clock at `frequency`, on CLOCK_BOOTTIME), as
    /// Perfetto's `traced_perf` does; its importer reads the samples of a
    /// sequence without them by a legacy path.
    private mutating func startIfNeeded(_ buffer: inout ProtoBuffer) {
        guard !started else { return }
        started = true
        typealias Packet = PerfettoWire.TracePacket
        typealias Defaults = PerfettoWire.PerfSampleDefaults
        let packet = buffer.beginMessage(PerfettoWire.Trace.packet)
        buffer.appendVarintField(Packet.trustedPacketSequenceID, UInt64(sequenceID))
        buffer.appendVarintField(Packet.sequenceFlags, UInt64(PerfettoWire.SequenceFlags.incrementalStateCleared))
        let defaults = buffer.beginMessage(PerfettoWire.ProfilePacket.tracePacketDefaults)
        let sampleDefaults = buffer.beginMessage(Defaults.field)
        let timebase = buffer.beginMessage(Defaults.timebase)
        if frequency > 0 { buffer.appendVarintField(Defaults.frequency, UInt64(frequency)) }
        buffer.appendVarintField(Defaults.counter, Defaults.softwareCPUClock)
        buffer.appendVarintField(Defaults.timestampClock, Defaults.boottimeClock)
        buffer.appendStringField(Defaults.name, "cpu-clock")
        buffer.endMessage(timebase)
        buffer.endMessage(sampleDefaults)
        buffer.endMessage(defaults)
        buffer.endMessage(packet)
    }

    /// Appends the samples in `words` (records as `cstrobe_sampler_drain`
    /// writes them: thread and CPU, CLOCK_BOOTTIME time, frame and unwind
    /// word counts, program counters innermost first, then the stack and
    /// frame pointers and the words at the stack pointer) to `buffer`,
    /// resolving each new program counter with `resolve`.
    ///
    /// Each stack is unwound by the call-frame information `rule` gives
    /// (``StackUnwinder``), so a function that keeps no frame pointer does
    /// not hide its caller; a stack that ends where a frame could not be
    /// unwound is counted in ``truncatedStacks``. A sample with no unwind
    /// words (a kernel that copies no registers) keeps the frame-pointer
    /// walk.
    package mutating func append(
        samples words: UnsafeBufferPointer<UInt64>, to buffer: inout ProtoBuffer,
        resolve: (UInt64) -> ResolvedFrame, rule: (UInt64) -> UnwindRule? = { _ in nil }
    ) {
        var index = 0
        var stack: [UInt64] = []
        var chain: [UInt64] = []
        while let length = Self.recordLength(in: words, at: index) {
            let threadAndCPU = words[index]
            let time = words[index + 1]
            let count = Int(UInt32(truncatingIfNeeded: words[index + 2]))
            chain.removeAll(keepingCapacity: true)
            for position in (index + 3)..<(index + 3 + count) {
                // The end of a chain (0, 1 or another value in the first
                // page) is no code address.
                if words[position] >= 4096 { chain.append(words[position]) }
            }
            let unwind = index + 3 + count
            if index + length - unwind >= 2, !chain.isEmpty {
                let result = StackUnwinder.unwind(
                    chain: chain, stackPointer: words[unwind], framePointer: words[unwind + 1],
                    stack: words[(unwind + 2)..<(index + length)], rule: rule)
                chain = result.frames
                if result.truncated { truncatedStacks += 1 }
            }
            stack.removeAll(keepingCapacity: true)
            // Root first, as Perfetto's callstacks list their frames.
            // Return addresses point after the call; step back into it so
            // the frame is the caller's call site.
            for (position, pc) in chain.enumerated().reversed() {
                stack.append(frame(for: position == 0 ? pc : pc &- 1, resolve: resolve))
            }
            if stack.isEmpty { stack.append(frame(for: 0, resolve: resolve)) }
            let callstack = internCallstack(stack)
            writeSample(
                thread: UInt32(truncatingIfNeeded: threadAndCPU), cpu: UInt32(truncatingIfNeeded: threadAndCPU >> 32),
                time: time, callstack: callstack, to: &buffer)
            index += length
        }
    }

    /// The words of the sample record that starts at `index` of `words` (as
    /// `cstrobe_sampler_drain` writes them: three header words, the frames,
    /// the stack words), or nil when no whole record starts there.
    package static func recordLength(in words: UnsafeBufferPointer<UInt64>, at index: Int) -> Int? {
        guard index + 3 <= words.count else { return nil }
        let length = 3 + Int(UInt32(truncatingIfNeeded: words[index + 2])) + Int(words[index + 2] >> 32)
        return index + length <= words.count ? length : nil
    }

    private mutating func string(_ text: String, field: UInt32) -> UInt64 {
        if let id = strings[field]?[text] { return id }
        let id = nextID
        nextID += 1
        strings[field, default: [:]][text] = id
        let entry = pending.beginMessage(field)
        pending.appendVarintField(PerfettoWire.InternedString.iid, id)
        pending.appendStringField(PerfettoWire.InternedString.text, text)
        pending.endMessage(entry)
        return id
    }

    /// Interns a build id given as hex text, written as its raw bytes (the
    /// `build_ids` strings of Perfetto's schema are bytes: 20 for a GNU
    /// build id).
    private mutating func buildID(_ hex: String) -> UInt64 {
        let field = PerfettoWire.ProfileInternedData.buildIDs
        if let id = strings[field]?[hex] { return id }
        let id = nextID
        nextID += 1
        strings[field, default: [:]][hex] = id
        let bytes = Self.bytes(ofHex: hex)
        let entry = pending.beginMessage(field)
        pending.appendVarintField(PerfettoWire.InternedString.iid, id)
        bytes.withUnsafeBytes { pending.appendBytesField(PerfettoWire.InternedString.text, $0) }
        pending.endMessage(entry)
        return id
    }

    /// The bytes hex text spells (pairs of digits; a digit left over or a
    /// character that is none ends it).
    package static func bytes(ofHex hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in hex.utf8 {
            let digit: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = character - UInt8(ascii: "A") + 10
            default: return bytes
            }
            if let first = high {
                bytes.append(first << 4 | digit)
                high = nil
            } else {
                high = digit
            }
        }
        return bytes
    }

    private mutating func mappingID(_ mapping: ProfileMapping) -> UInt64 {
        if let id = mappings[mapping.start] { return id }
        typealias Fields = PerfettoWire.Mapping
        let build = mapping.buildID.isEmpty ? nil : buildID(mapping.buildID)
        let path = string(mapping.path, field: PerfettoWire.ProfileInternedData.mappingPaths)
        let id = nextID
        nextID += 1
        mappings[mapping.start] = id
        let entry = pending.beginMessage(PerfettoWire.ProfileInternedData.mappings)
        pending.appendVarintField(Fields.iid, id)
        if let build { pending.appendVarintField(Fields.buildID, build) }
        pending.appendVarintField(Fields.exactOffset, mapping.fileOffset)
        pending.appendVarintField(Fields.start, mapping.start)
        pending.appendVarintField(Fields.end, mapping.end)
        pending.appendVarintField(Fields.pathStringIDs, path)
        pending.endMessage(entry)
        return id
    }

    private mutating func frame(for pc: UInt64, resolve: (UInt64) -> ResolvedFrame) -> UInt64 {
        if let id = framesByPC[pc] { return id }
        let resolved = resolve(pc)
        let mapping = resolved.mapping.map { mappingID($0) }
        let name = resolved.function ?? String(pc, radix: 16).leftPadded(to: 12).hexPrefixed
        let key = FrameKey(function: name, mapping: mapping ?? 0)
        if let id = frames[key] {
            framesByPC[pc] = id
            return id
        }
        let function = string(name, field: PerfettoWire.ProfileInternedData.functionNames)
        let id = nextID
        nextID += 1
        frames[key] = id
        framesByPC[pc] = id
        typealias Fields = PerfettoWire.Frame
        let entry = pending.beginMessage(PerfettoWire.ProfileInternedData.frames)
        pending.appendVarintField(Fields.iid, id)
        pending.appendVarintField(Fields.functionNameID, function)
        if let mapping { pending.appendVarintField(Fields.mappingID, mapping) }
        pending.appendVarintField(Fields.relativePC, resolved.relativePC)
        pending.endMessage(entry)
        return id
    }

    private mutating func internCallstack(_ stack: [UInt64]) -> UInt64 {
        if let id = callstacks[stack] { return id }
        let id = nextID
        nextID += 1
        callstacks[stack] = id
        let entry = pending.beginMessage(PerfettoWire.ProfileInternedData.callstacks)
        pending.appendVarintField(PerfettoWire.Callstack.iid, id)
        for frame in stack { pending.appendVarintField(PerfettoWire.Callstack.frameIDs, frame) }
        pending.endMessage(entry)
        return id
    }

    /// Appends a packet that counts `count` samples lost by `time`, as
    /// Perfetto's producers report a full ring: a `PerfSample` with
    /// `kernel_records_lost` and no call stack, which Perfetto adds to its
    /// `perf_cpu_lost_records` statistic.
    package mutating func appendLoss(_ count: UInt64, time: UInt64, to buffer: inout ProtoBuffer) {
        guard count > 0 else { return }
        let packet = beginPacket(at: time, in: &buffer)
        buffer.appendVarintField(PerfettoWire.TracePacket.timestampClockID, UInt64(PerfettoWire.Clock.boottime))
        let sample = buffer.beginMessage(PerfettoWire.ProfilePacket.perfSample)
        buffer.appendVarintField(PerfettoWire.PerfSample.cpu, 0)
        buffer.appendVarintField(PerfettoWire.PerfSample.kernelRecordsLost, count)
        buffer.endMessage(sample)
        buffer.endMessage(packet)
    }

    private mutating func writeSample(
        thread: UInt32, cpu: UInt32, time: UInt64, callstack: UInt64, to buffer: inout ProtoBuffer
    ) {
        typealias Packet = PerfettoWire.TracePacket
        typealias Sample = PerfettoWire.PerfSample
        let packet = beginPacket(at: time, in: &buffer)
        if pending.count > 0 {
            let interned = buffer.beginMessage(Packet.internedData)
            pending.withBytes { buffer.append($0) }
            buffer.endMessage(interned)
            pending.removeAll()
        }
        let flags = PerfettoWire.SequenceFlags.needsIncrementalState
        buffer.appendVarintField(Packet.sequenceFlags, UInt64(flags))
        buffer.appendVarintField(Packet.timestampClockID, UInt64(PerfettoWire.Clock.boottime))
        let sample = buffer.beginMessage(PerfettoWire.ProfilePacket.perfSample)
        buffer.appendVarintField(Sample.cpu, UInt64(cpu))
        buffer.appendVarintField(Sample.pid, UInt64(processID))
        buffer.appendVarintField(Sample.tid, UInt64(thread))
        buffer.appendVarintField(Sample.callstackIID, callstack)
        buffer.appendVarintField(Sample.cpuMode, PerfettoWire.PerfSample.cpuModeUser)
        buffer.endMessage(sample)
        buffer.endMessage(packet)
        samples += 1
    }

    /// Begins a packet of this sequence at `time`, after the sequence's
    /// first packet when that is still to be written; returns where it
    /// starts, for `endMessage`.
    private mutating func beginPacket(at time: UInt64, in buffer: inout ProtoBuffer) -> Int {
        startIfNeeded(&buffer)
        let packet = buffer.beginMessage(PerfettoWire.Trace.packet)
        buffer.appendVarintField(PerfettoWire.TracePacket.timestamp, time)
        buffer.appendVarintField(PerfettoWire.TracePacket.trustedPacketSequenceID, UInt64(sequenceID))
        return packet
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }

    fileprivate var hexPrefixed: String { "0x" + self }
}
