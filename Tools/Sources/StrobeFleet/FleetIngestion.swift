import Foundation
import StrobeHistoryStore
import Synchronization

/// Ingests trace files into a fleet store: extracts every trace on all
/// cores, stores them in batches (one transaction each) while the next batch
/// is extracted, and skips what cannot be read with its path and reason.
package enum FleetIngestion {
    /// What an ingest did.
    package struct Summary: Sendable, Hashable, CustomStringConvertible {
        /// Files looked at.
        package var files = 0
        /// Traces stored now.
        package var added = 0
        /// Traces the store held already.
        package var alreadyStored = 0
        /// Files skipped, each with its reason, in path order.
        package var refused: [FleetTraceRefusal] = []

        /// An empty summary.
        package init() {}

        /// `N traces: A added, S already stored, K skipped`.
        package var description: String {
            "\(files) traces: \(added) added, \(alreadyStored) already stored, \(refused.count) skipped"
        }
    }

    /// The files `paths` name: each file itself, and every regular file
    /// under each directory (hidden ones left out), in path order.
    ///
    /// - Throws: ``FleetTraceRefusal`` for a path that does not exist.
    package static func traceFiles(in paths: [String]) throws(FleetTraceRefusal) -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw FleetTraceRefusal(source: path, reason: "no such file or directory")
            }
            guard isDirectory.boolValue else {
                files.append(path)
                continue
            }
            let base = URL(fileURLWithPath: path)
            let enumerator = FileManager.default.enumerator(
                at: base, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
            var found: [String] = []
            while let url = enumerator?.nextObject() as? URL {
                if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                    found.append(
                        path.hasSuffix("/")
                            ? path + url.path.dropFirst(base.path.count + 1)
                            : path + "/" + url.path.dropFirst(base.path.count + 1))
                }
            }
            files += found.sorted()
        }
        return files
    }

    /// Reads, extracts and stores every file of `files` in `store`, batch by
    /// batch; `workers` threads extract at once (default: one per core).
    package static func ingest(
        files: [String], into store: any FleetStore, batchSize: Int = 64,
        workers: Int = ProcessInfo.processInfo.activeProcessorCount
    ) async throws -> Summary {
        var summary = Summary()
        summary.files = files.count
        var pending: Task<FleetAddCounts, any Error>?
        for start in stride(from: 0, to: files.count, by: max(1, batchSize)) {
            let batch = Array(files[start..<min(files.count, start + max(1, batchSize))])
            let results = extract(batch, workers: workers)
            var records: [FleetTraceRecord] = []
            for result in results {
                switch result {
                case .success(let record): records.append(record)
                case .failure(let refusal): summary.refused.append(refusal)
                }
            }
            if let pending { add(try await pending.value, to: &summary) }
            pending = Task { [records] in try await store.add(records) }
        }
        if let pending { add(try await pending.value, to: &summary) }
        return summary
    }

    private static func add(_ counts: FleetAddCounts, to summary: inout Summary) {
        summary.added += counts.added
        summary.alreadyStored += counts.alreadyStored
    }

    /// Extracts `files` on `workers` threads, in their order.
    static func extract(_ files: [String], workers: Int) -> [Result<FleetTraceRecord, FleetTraceRefusal>] {
        let results = Mutex([Result<FleetTraceRecord, FleetTraceRefusal>?](repeating: nil, count: files.count))
        let next = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: max(1, min(workers, files.count))) { _ in
            while true {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < files.count else { return }
                let result = extract(file: files[index])
                results.withLock { $0[index] = result }
            }
        }
        return results.withLock { $0.map { $0! } }
    }

    /// Reads and extracts one file.
    static func extract(file path: String) -> Result<FleetTraceRecord, FleetTraceRefusal> {
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(FleetTraceRefusal(source: path, reason: "cannot read the file"))
        }
        return FleetTraceExtraction.record(of: [UInt8](data), source: path)
    }
}
