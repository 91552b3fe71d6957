import Foundation
import StrobeHistory
import StrobeHistoryStore
import StrobeProcessRunner
import StrobeResults
import StrobeTestSupport

/// `make bench history`: the run history's speed on SQLite and PostgreSQL.
///
/// PostgreSQL comes from `STROBE_BENCH_POSTGRES_URL`, or else from a
/// throwaway server `scripts/postgres.sh` starts (and stops) for the run.
enum HistoryBenchmarks {
    static func run() async throws {
        ToolBenchmarkSection.printOpeningLine("history")
        try await ToolBenchmarkSection.withScratchDirectory("history") { scratch in
            let server = try PostgresServer.start(in: scratch + "/postgres")
            defer { server.stop() }

            try await addOne(scratch: scratch)
            try await concurrentWriters(url: server.url, database: "bench_writers")
            try await load(scratch: scratch, server: server)
        }
    }

    /// One run of 50 metrics into SQLite, against writing it as a results file.
    static func addOne(scratch: String) async throws {
        let store = try await HistoryStores.open(.sqlite(path: scratch + "/add.sqlite"))
        var next = 0
        func record() -> RunRecord {
            next += 1
            return RunRecord(run: sampleRun(id: "add-\(next)", time: Int64(next)))
        }
        for _ in 0..<10 { _ = try await store.add(record()) }
        var adds: [Double] = []
        for _ in 0..<101 {
            let record = record()
            let start = DispatchTime.now().uptimeNanoseconds
            _ = try await store.add(record)
            adds.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        await store.close()
        var writes: [Double] = []
        for index in 0..<101 {
            let run = sampleRun(id: "file-\(index)", time: Int64(index))
            let start = DispatchTime.now().uptimeNanoseconds
            try ResultsFile.write(run, to: scratch + "/file-\(index).strobe-results")
            writes.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        Figure(
            name: "add one run of 50 metrics × 10 iterations to SQLite (median of 101)", value: median(adds),
            unit: "ms",
            baselineName: "write the run as a results file", baselineValue: median(writes), target: "value <= 50",
            extra: ["p90_ms": quantile(adds, 0.9)]
        ).printLine()
    }

    /// 8 writers × 200 runs into one PostgreSQL database at once, each also
    /// re-adding 20 of its neighbour's runs: every run stored exactly once.
    static func concurrentWriters(url: String, database: String) async throws {
        let target = try PostgresServer.createDatabase(database, url: url)
        let location = try HistoryLocation.parse(target)
        let writers = 8
        let perWriter = 200
        let records = (0..<writers).map { writer in
            (0..<perWriter).map {
                RunRecord(run: sampleRun(id: "w\(writer)-\($0)", time: Int64(writer * perWriter + $0)))
            }
        }
        // Migrate first, so that the timing is of adding.
        await (try HistoryStores.open(location)).close()
        let start = DispatchTime.now().uptimeNanoseconds
        let counts = try await withThrowingTaskGroup(of: HistoryWriter.Counts.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    let store = try await HistoryStores.open(location)
                    var work = records[writer] + records[(writer + 1) % writers].prefix(20)
                    var generator = SystemRandomNumberGenerator()
                    work.shuffle(using: &generator)
                    var counts = HistoryWriter.Counts()
                    for record in work {
                        switch try await store.add(record) {
                        case .added: counts.added += 1
                        case .alreadyStored: counts.alreadyStored += 1
                        }
                    }
                    await store.close()
                    return counts
                }
            }
            var total = HistoryWriter.Counts()
            for try await counts in group {
                total.added += counts.added
                total.alreadyStored += counts.alreadyStored
            }
            return total
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let store = try await HistoryStores.open(location)
        let stored = try await store.count()
        let distinct = Set(try await store.runs(HistoryQuery()).map(\.key)).count
        await store.close()
        guard stored == writers * perWriter, distinct == stored, counts.added == stored,
            counts.alreadyStored == writers * 20
        else {
            throw BenchmarkFailure(
                "concurrent writers: \(stored) stored (\(distinct) distinct), \(counts) — expected "
                    + "\(writers * perWriter) added, \(writers * 20) already stored"
            )
        }
        // Baseline: one writer adding 200 runs alone.
        let alone = try PostgresServer.createDatabase(database + "_alone", url: url)
        let single = try await HistoryStores.open(try HistoryLocation.parse(alone))
        let singleStart = DispatchTime.now().uptimeNanoseconds
        for record in records[0] { _ = try await single.add(record) }
        let singleSeconds = Double(DispatchTime.now().uptimeNanoseconds - singleStart) / 1e9
        await single.close()
        Figure(
            name: "8 writers × 200 runs (+20 duplicates each) into one PostgreSQL: runs added per second",
            value: Double(stored) / seconds, unit: "runs/s", baselineName: "one writer alone, 200 runs",
            baselineValue: Double(perWriter) / singleSeconds,
            extra: [
                "seconds": seconds, "runs_stored": Double(stored), "lost": Double(writers * perWriter - distinct),
                "doubled": Double(stored - distinct), "duplicates_refused": Double(counts.alreadyStored),
            ]
        ).printLine()
    }

    /// 10,000 runs × 50 metrics read back from each store, against reading
    /// the same runs from results files.
    static func load(scratch: String, server: PostgresServer) async throws {
        let count = 10_000
        let files = scratch + "/files"
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        let sqlite = try await HistoryStores.open(.sqlite(path: scratch + "/load.sqlite"))
        let postgresLocation = try HistoryLocation.parse(
            try PostgresServer.createDatabase("bench_load", url: server.url))
        let postgresWriters = 4
        let stores = try await (0..<postgresWriters).asyncMap { _ in try await HistoryStores.open(postgresLocation) }
        for batch in stride(from: 0, to: count, by: 500) {
            let records = (batch..<min(batch + 500, count)).map {
                RunRecord(run: sampleRun(id: "load-\($0)", time: Int64($0)))
            }
            for record in records {
                _ = try await sqlite.add(record)
                try ResultsFile.write(record.run, to: files + "/\(record.key).strobe-results")
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, store) in stores.enumerated() {
                    group.addTask {
                        for (offset, record) in records.enumerated() where offset % postgresWriters == index {
                            _ = try await store.add(record)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        for store in stores { await store.close() }
        await sqlite.close()

        func time(_ body: () async throws -> Int) async throws -> (seconds: Double, metrics: Int) {
            let start = DispatchTime.now().uptimeNanoseconds
            let metrics = try await body()
            return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, metrics)
        }
        let fromFiles = try await time {
            let names = try FileManager.default.contentsOfDirectory(atPath: files)
            var metrics = 0
            for name in names { metrics += try ResultsFile.read(files + "/" + name).tests.flatMap(\.metrics).count }
            return metrics
        }
        for (name, location) in [
            ("SQLite", HistoryLocation.sqlite(path: scratch + "/load.sqlite")), ("PostgreSQL", postgresLocation),
        ] {
            let store = try await HistoryStores.open(location)
            let loaded = try await time {
                try await store.runs(HistoryQuery()).reduce(0) { $0 + $1.tests.flatMap(\.metrics).count }
            }
            let filtered = try await time {
                try await store.runs(HistoryQuery(filters: [HistoryFilter(.tag("device"), "d3")])).reduce(0) {
                    $0 + $1.tests.flatMap(\.metrics).count
                }
            }
            await store.close()
            guard loaded.metrics == count * 50, fromFiles.metrics == count * 50 else {
                throw BenchmarkFailure(
                    "\(name): loaded \(loaded.metrics) metrics, files \(fromFiles.metrics), expected \(count * 50)")
            }
            Figure(
                name: "load 10,000 runs × 50 metrics (summaries) from \(name)", value: loaded.seconds, unit: "s",
                baselineName: "read the 10,000 results files", baselineValue: fromFiles.seconds, target: "value <= 5",
                extra: ["filtered_by_tag_s": filtered.seconds, "filtered_runs": Double(filtered.metrics / 50)]
            ).printLine()
        }
    }

    /// A run of one test with 50 metrics of 10 iterations.
    static func sampleRun(id: String, time: Int64) -> PerfRun {
        let metrics = (0..<50).map { index in
            PerfMetric(
                name: "metric.\(index)", unit: index % 5 == 0 ? "bytes" : "ns",
                samples: (0..<10).map { 1e6 + Double(index * 1000 + $0 * 17) + Double(time % 101) })
        }
        return PerfRun(
            metadata: RunMetadata(
                suite: "bench", gitCommit: String(format: "%040x", time), host: "runner-\(time % 4)", os: "Linux",
                cpuModel: "bench", coreCount: 2, buildConfiguration: "release", timestamp: time * 1_000_000_000,
                tags: ["branch": "main", "device": "d\(time % 8)"], runID: id),
            tests: [PerfTestResult(name: "suite", metrics: metrics, warmupIterations: 1)])
    }

    /// `model name` from /proc/cpuinfo, as the runner records it.
    static func cpuModel() -> String {
        RunMetadata.current(suite: "bench", buildConfiguration: "release", tags: [:]).cpuModel
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A PostgreSQL server for the benchmark: the one `STROBE_BENCH_POSTGRES_URL`
/// names, or a throwaway one.
struct PostgresServer {
    var url: String
    var directory: String?

    static func start(in directory: String) throws -> PostgresServer {
        if let url = ProcessInfo.processInfo.environment["STROBE_BENCH_POSTGRES_URL"] {
            return PostgresServer(url: url, directory: nil)
        }
        let url = try shell(["bash", "scripts/postgres.sh", "start", directory]).trimmingCharacters(
            in: .whitespacesAndNewlines)
        return PostgresServer(url: url, directory: directory)
    }

    func stop() {
        if let directory { _ = try? Self.shell(["bash", "scripts/postgres.sh", "stop", directory]) }
    }

    /// Creates `name` on the server of `url` (dropping it first) and returns its URL.
    static func createDatabase(_ name: String, url: String) throws -> String {
        guard let components = URLComponents(string: url), let user = components.user else {
            throw BenchmarkFailure("\(url) is not a postgres URL")
        }
        let host = components.queryItems?.first { $0.name == "host" }?.value ?? components.host ?? "localhost"
        let port =
            components.queryItems?.first { $0.name == "port" }?.value ?? components.port.map(String.init) ?? "5432"
        let database = String(components.path.dropFirst())
        for statement in ["DROP DATABASE IF EXISTS \(name)", "CREATE DATABASE \(name)"] {
            _ = try shell([
                "psql", "-q", "-h", host, "-p", port, "-U", user, "-d", database, "-c",
                "SET client_min_messages = warning",
                "-c", statement,
            ])
        }
        var renamed = components
        renamed.path = "/" + name
        guard let text = renamed.string else { throw BenchmarkFailure("cannot rename the database of \(url)") }
        return text
    }

    /// Runs `command` through the shell and returns what it printed.
    /// (popen, not Process: waiting for a Process from async code can hang
    /// on Linux once the server it started keeps running.)
    static func shell(_ arguments: [String]) throws -> String {
        let command = arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(
            separator: " ")
        guard let pipe = popen(command, "r") else { throw BenchmarkFailure("cannot run \(command)") }
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, pipe)
            if count <= 0 { break }
            output += buffer[0..<count]
        }
        let status = pclose(pipe)
        guard status == 0 else { throw BenchmarkFailure("\(command) failed (status \(status))") }
        return String(decoding: output, as: UTF8.self)
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
