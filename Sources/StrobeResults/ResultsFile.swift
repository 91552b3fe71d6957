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
            let paths = storage.allocateArray(UnsafeMutablePointer<CChar>?.self, count: test.tracePaths.count)
            for (index, path) in test.tracePaths.enumerated() { paths[index] = storage.string(path) }
            result.pointee.n_trace_paths = test.tracePaths.count
            result.pointee.trace_paths = paths
            let metrics = storage.allocateArray(
                UnsafeMutablePointer<Strobe__Results__Metric>?.self, count: test.metrics.count)
            for (index, metric) in test.metrics.enumerated() {
                let message = storage.allocate(Strobe__Results__Metric.self)
                strobe__results__metric__init(message)
                message.pointee.name = storage.string(metric.name)
                message.pointee.unit = storage.string(metric.unit)
                message.pointee.has_direction = 1
                message.pointee.direction =
                    metric.better == .lower
                    ? STROBE__RESULTS__METRIC__DIRECTION__LOWER_IS_BETTER
                    : STROBE__RESULTS__METRIC__DIRECTION__HIGHER_IS_BETTER
                let samples = storage.allocateArray(Double.self, count: metric.samples.count)
                for (sampleIndex, sample) in metric.samples.enumerated() { samples[sampleIndex] = sample }
                message.pointee.n_samples = metric.samples.count
                message.pointee.samples = samples
                metrics[index] = message
            }
            result.pointee.n_metrics = test.metrics.count
            result.pointee.metrics = metrics
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
        let metadata = RunMetadata(
            suite: text(meta.suite), gitCommit: text(meta.git_commit), host: text(meta.host), os: text(meta.os),
            cpuModel: text(meta.cpu_model), coreCount: Int(meta.core_count),
            buildConfiguration: text(meta.build_configuration), timestamp: meta.timestamp_unix_ns, tags: tags,
            strobeVersion: text(meta.strobe_version), runID: text(meta.run_id),
            round: meta.has_round != 0 ? Int(meta.round) : nil, samplesAreLaunches: meta.samples_are_launches != 0)
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
                            "metric \(text(metric.name)) of test \(text(test.name)) has a sample that is not a finite number"
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
            tests.append(
                PerfTestResult(
                    name: text(test.name), metrics: metrics, error: test.error.map { String(cString: $0) },
                    warmupIterations: Int(test.warmup_iterations), tracePaths: paths))
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

    private var strings: [UnsafeMutablePointer<CChar>] = []

    /// A C copy of `text`, freed with the rest.
    mutating func string(_ text: String) -> UnsafeMutablePointer<CChar> {
        let pointer = strdup(text)!
        strings.append(pointer)
        return pointer
    }

    mutating func release() {
        blocks.forEach { $0.deallocate() }
        strings.forEach { free($0) }
        strings = []
        blocks = []
    }
}
