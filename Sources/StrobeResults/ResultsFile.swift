import CProtobufC
import Foundation
import StrobeProtos

/// Reads and writes perf results files: a `Run` message of
/// `Proto/strobe_results.proto`, serialized with protobuf-c.
///
/// The conventional extension is `.strobe-results`.
public enum ResultsFile {
    /// The file extension results files carry.
    public static let fileExtension = "strobe-results"

    /// `name` with every character but letters, digits, `-`, `_` and `.`
    /// turned into `-`: how a suite or test name goes into a results file's
    /// name (or a trace's folder).
    public static func fileSafe(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "-" })
    }

    /// Writes `run` to `path`.
    public static func write(_ run: PerfRun, to path: String) throws(ResultsFileError) {
        let bytes = encode(run)
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw ResultsFileError(
                path: path, problem: "cannot write: \(error.localizedDescription)",
                errno: ResultsFileError.posixCode(of: error))
        }
    }

    /// Reads the results file at `path`.
    public static func read(_ path: String) throws(ResultsFileError) -> PerfRun {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ResultsFileError(
                path: path, problem: "cannot read: \(error.localizedDescription)",
                errno: ResultsFileError.posixCode(of: error))
        }
        return try decode([UInt8](data), path: path)
    }

    /// The protobuf bytes of `run`.
    public static func encode(_ run: PerfRun) -> [UInt8] {
        var storage = MessageStorage()
        var metadata = Strobe__Results__RunMetadata()
        strobe__results__run_metadata__init(&metadata)
        metadata.suite = storage.string(run.metadata.suite)
        metadata.git_commit = storage.string(run.metadata.gitCommit)
        metadata.host = storage.string(run.metadata.host)
        metadata.os = storage.string(run.metadata.os)
        metadata.cpu_model = storage.string(run.metadata.cpuModel)
        metadata.has_core_count = 1
        metadata.core_count = UInt32(clamping: run.metadata.coreCount)
        metadata.build_configuration = storage.string(run.metadata.buildConfiguration)
        metadata.has_timestamp_unix_ns = 1
        metadata.timestamp_unix_ns = run.metadata.timestamp
        metadata.strobe_version = storage.string(run.metadata.strobeVersion)
        if !run.metadata.runID.isEmpty { metadata.run_id = storage.string(run.metadata.runID) }
        if let round = run.metadata.round {
            metadata.has_round = 1
            metadata.round = UInt32(clamping: round)
        }
        if run.metadata.samplesAreLaunches {
            metadata.has_samples_are_launches = 1
            metadata.samples_are_launches = 1
        }
        if !run.metadata.instructionSource.isEmpty {
            metadata.instruction_source = storage.string(run.metadata.instructionSource)
        }
        if !run.metadata.instructionNote.isEmpty {
            metadata.instruction_note = storage.string(run.metadata.instructionNote)
        }
        if run.metadata.simulated {
            metadata.has_simulated = 1
            metadata.simulated = 1
        }

        let tags = run.metadata.tags.sorted { $0.key < $1.key }
        let dimensions = UnsafeMutableBufferPointer<Strobe__Results__Dimension>.allocate(capacity: max(tags.count, 1))
        let dimensionPointers = UnsafeMutableBufferPointer<UnsafeMutablePointer<Strobe__Results__Dimension>?>
            .allocate(capacity: max(tags.count, 1))
        defer {
            dimensions.deallocate()
            dimensionPointers.deallocate()
        }
        for (index, tag) in tags.enumerated() {
            var dimension = Strobe__Results__Dimension()
            strobe__results__dimension__init(&dimension)
            dimension.key = storage.string(tag.key)
            dimension.value = storage.string(tag.value)
            dimensions[index] = dimension
            dimensionPointers[index] = dimensions.baseAddress! + index
        }
        metadata.n_dimensions = tags.count
        metadata.dimensions = dimensionPointers.baseAddress

        var testPointers: [UnsafeMutablePointer<Strobe__Results__TestResult>?] = []
        for test in run.tests {
            let result = storage.allocate(Strobe__Results__TestResult.self)
            strobe__results__test_result__init(result)
            result.pointee.name = storage.string(test.name)
            if let error = test.error { result.pointee.error = storage.string(error) }
            result.pointee.has_warmup_iterations = 1
            result.pointee.warmup_iterations = UInt32(clamping: test.warmupIterations)
            (result.pointee.n_trace_paths, result.pointee.trace_paths) = storage.strings(test.tracePaths)
            let metrics: [UnsafeMutablePointer<Strobe__Results__Metric>?] = test.metrics.map { metric in
                let message = storage.allocate(Strobe__Results__Metric.self)
                strobe__results__metric__init(message)
                message.pointee.name = storage.string(metric.name)
                message.pointee.unit = storage.string(metric.unit)
                message.pointee.has_direction = 1
                message.pointee.direction =
                    metric.better == .lower
                    ? STROBE__RESULTS__METRIC__DIRECTION__LOWER_IS_BETTER
                    : STROBE__RESULTS__METRIC__DIRECTION__HIGHER_IS_BETTER
                (message.pointee.n_samples, message.pointee.samples) = storage.array(metric.samples)
                return message
            }
            (result.pointee.n_metrics, result.pointee.metrics) = storage.array(metrics)
            if let profile = test.profile { result.pointee.profile = encode(profile, in: &storage) }
            if let counts = test.instructionProfile {
                result.pointee.instruction_profile = encode(counts, in: &storage)
            }
            let criticalPaths = test.criticalPaths.map { encode($0, in: &storage) }
            (result.pointee.n_critical_paths, result.pointee.critical_paths) = storage.array(criticalPaths)
            testPointers.append(result)
        }
        var message = Strobe__Results__Run()
        strobe__results__run__init(&message)
        return withUnsafeMutablePointer(to: &metadata) { metadata in
            message.metadata = metadata
            return testPointers.withUnsafeMutableBufferPointer { tests in
                message.n_tests = tests.count
                message.tests = tests.baseAddress
                let size = strobe__results__run__get_packed_size(&message)
                var bytes = [UInt8](repeating: 0, count: size)
                _ = bytes.withUnsafeMutableBufferPointer { strobe__results__run__pack(&message, $0.baseAddress) }
                storage.release()
                return bytes
            }
        }
    }

    private static func encode(
        _ profile: CallStackProfile, in storage: inout MessageStorage
    ) -> UnsafeMutablePointer<Strobe__Results__CallStackProfile> {
        let message = storage.allocate(Strobe__Results__CallStackProfile.self)
        strobe__results__call_stack_profile__init(message)
        (message.pointee.n_functions, message.pointee.functions) = storage.strings(profile.functions)
        let stacks: [UnsafeMutablePointer<Strobe__Results__SampledStack>?] = profile.stacks.map { stack in
            let entry = storage.allocate(Strobe__Results__SampledStack.self)
            strobe__results__sampled_stack__init(entry)
            (entry.pointee.n_frames, entry.pointee.frames) = storage.array(stack.frames.map { UInt32(clamping: $0) })
            entry.pointee.has_samples = 1
            entry.pointee.samples = UInt64(clamping: stack.samples)
            return entry
        }
        (message.pointee.n_stacks, message.pointee.stacks) = storage.array(stacks)
        message.pointee.has_nanoseconds_per_sample = 1
        message.pointee.nanoseconds_per_sample = profile.nanosecondsPerSample
        message.pointee.has_iterations = 1
        message.pointee.iterations = UInt32(clamping: profile.iterations)
        message.pointee.has_lost_samples = 1
        message.pointee.lost_samples = UInt64(clamping: profile.lostSamples)
        message.pointee.method = storage.string(profile.method)
        return message
    }

    private static func decode(
        _ message: Strobe__Results__CallStackProfile, test: String, path: String
    ) throws(ResultsFileError) -> CallStackProfile {
        func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        let functions = (0..<message.n_functions).map { text(message.functions[$0]) }
        var stacks: [CallStackProfile.Stack] = []
        for index in 0..<message.n_stacks {
            guard let stack = message.stacks[index]?.pointee else { continue }
            let frames = Array(UnsafeBufferPointer(start: stack.frames, count: stack.n_frames)).map { Int($0) }
            guard frames.allSatisfy({ $0 < functions.count }) else {
                throw ResultsFileError(
                    path: path,
                    problem: "the profile of test \(test) has a stack naming function \(frames.max() ?? 0) "
                        + "of \(functions.count)")
            }
            stacks.append(CallStackProfile.Stack(frames: frames, samples: Int(clamping: stack.samples)))
        }
        guard message.nanoseconds_per_sample.isFinite, message.nanoseconds_per_sample > 0 else {
            throw ResultsFileError(
                path: path, problem: "the profile of test \(test) gives no positive time per sample")
        }
        return CallStackProfile(
            functions: functions, stacks: stacks, nanosecondsPerSample: message.nanoseconds_per_sample,
            iterations: Int(message.iterations), lostSamples: Int(clamping: message.lost_samples),
            method: text(message.method))
    }

    /// Decodes results from `bytes`; `path` names them in errors.
    public static func decode(_ bytes: [UInt8], path: String) throws(ResultsFileError) -> PerfRun {
        guard !bytes.isEmpty else { throw ResultsFileError(path: path, problem: "empty file, not a results file") }
        let unpacked = bytes.withUnsafeBufferPointer { strobe__results__run__unpack(nil, $0.count, $0.baseAddress) }
        guard let message = unpacked else {
            throw ResultsFileError(
                path: path, problem: "not a results file (protobuf decoding failed in \(bytes.count) bytes)")
        }
        defer { strobe__results__run__free_unpacked(message, nil) }
        func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        guard let metadataPointer = message.pointee.metadata else {
            throw ResultsFileError(path: path, problem: "results file without run metadata")
        }
        let meta = metadataPointer.pointee
        var tags: [String: String] = [:]
        for index in 0..<meta.n_dimensions {
            guard let dimension = meta.dimensions[index]?.pointee else { continue }
            tags[text(dimension.key)] = text(dimension.value)
        }
        var metadata = RunMetadata(
            suite: text(meta.suite), gitCommit: text(meta.git_commit), host: text(meta.host), os: text(meta.os),
            cpuModel: text(meta.cpu_model), coreCount: Int(meta.core_count),
            buildConfiguration: text(meta.build_configuration), timestamp: meta.timestamp_unix_ns, tags: tags,
            strobeVersion: text(meta.strobe_version), runID: text(meta.run_id),
            round: meta.has_round != 0 ? Int(meta.round) : nil, samplesAreLaunches: meta.samples_are_launches != 0)
        metadata.instructionSource = text(meta.instruction_source)
        metadata.instructionNote = text(meta.instruction_note)
        metadata.simulated = meta.simulated != 0
        var tests: [PerfTestResult] = []
        for index in 0..<message.pointee.n_tests {
            guard let test = message.pointee.tests[index]?.pointee else { continue }
            var metrics: [PerfMetric] = []
            for metricIndex in 0..<test.n_metrics {
                guard let metric = test.metrics[metricIndex]?.pointee else { continue }
                let samples = Array(UnsafeBufferPointer(start: metric.samples, count: metric.n_samples))
                guard samples.allSatisfy(\.isFinite) else {
                    throw ResultsFileError(
                        path: path,
                        problem:
                            "metric \(text(metric.name)) of test \(text(test.name)) has a sample that is not a finite "
                            + "number"
                    )
                }
                metrics.append(
                    PerfMetric(
                        name: text(metric.name), unit: text(metric.unit),
                        better: metric.direction == STROBE__RESULTS__METRIC__DIRECTION__HIGHER_IS_BETTER
                            ? .higher : .lower,
                        samples: samples))
            }
            let paths = (0..<test.n_trace_paths).map { text(test.trace_paths[$0]) }
            var result = PerfTestResult(
                name: text(test.name), metrics: metrics, error: test.error.map { String(cString: $0) },
                warmupIterations: Int(test.warmup_iterations), tracePaths: paths)
            if let profile = test.profile?.pointee {
                result.profile = try decode(profile, test: result.name, path: path)
            }
            if let counts = test.instruction_profile?.pointee {
                result.instructionProfile = try decode(counts, test: result.name, path: path)
            }
            for index in 0..<test.n_critical_paths {
                guard let record = test.critical_paths[index]?.pointee else { continue }
                result.criticalPaths.append(try decode(record, test: result.name, path: path))
            }
            tests.append(result)
        }
        return PerfRun(metadata: metadata, tests: tests)
    }
}

/// Raw memory for protobuf-c messages built from Swift.
struct MessageStorage {
    private var blocks: [UnsafeMutableRawPointer] = []

    mutating func allocate<T>(_ type: T.Type) -> UnsafeMutablePointer<T> {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: MemoryLayout<T>.stride, alignment: MemoryLayout<T>.alignment)
        blocks.append(raw)
        return raw.bindMemory(to: T.self, capacity: 1)
    }

    mutating func allocateArray<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: MemoryLayout<T>.stride * max(count, 1), alignment: MemoryLayout<T>.alignment)
        blocks.append(raw)
        return raw.bindMemory(to: T.self, capacity: max(count, 1))
    }

    /// A C copy of `values`, freed with the rest, with their count: a
    /// repeated field's two members.
    mutating func array<T>(_ values: [T]) -> (count: Int, elements: UnsafeMutablePointer<T>) {
        let elements = allocateArray(T.self, count: values.count)
        for (index, value) in values.enumerated() { elements[index] = value }
        return (values.count, elements)
    }

    private var strings: [UnsafeMutablePointer<CChar>] = []

    /// A C copy of `text`, freed with the rest.
    mutating func string(_ text: String) -> UnsafeMutablePointer<CChar> {
        let pointer = strdup(text)!
        strings.append(pointer)
        return pointer
    }

    /// C copies of `texts` in a C array, freed with the rest, with their
    /// count: a repeated string field's two members.
    mutating func strings(_ texts: [String]) -> (
        count: Int, elements: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    ) {
        array(texts.map { string($0) })
    }

    mutating func release() {
        blocks.forEach { $0.deallocate() }
        strings.forEach { free($0) }
        strings = []
        blocks = []
    }
}
