import ArgumentParser
import Foundation
import StrobeHistory
import StrobeHistoryStore

/// `strobe history list`: what a store holds, so that a filter, a series
/// or a grouping key can be written without guessing.
struct HistoryListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List what the store holds: suites, tests, metrics, hosts, branches, tags and fleet metadata.",
        discussion: """
            Each name is followed by how many runs (or, for the fleet, traces) carry it. Reads the store \
            without changing it; a missing store is an error (exit status 2).
            """
    )

    @OptionGroup var options: HistoryStoreOptions

    func run() async throws {
        let store = try await options.open(.readOnly)
        let runs: [HistoryRun]
        let fleet: (traces: Int, metrics: [String], keys: [FleetMetadataKey])
        do {
            runs = try await store.runs(HistoryQuery())
            guard let fleetStore = store as? any FleetStore else {
                throw HistoryError(.database, "\(store.location): the store holds no fleet tables")
            }
            fleet = (
                try await fleetStore.traceCount(),
                try await fleetStore.metricNames().map { "\($0.kind.rawValue):\($0.name)" },
                try await fleetStore.metadataKeys()
            )
            await store.close()
        } catch let error as HistoryError {
            await store.close()
            throw CommandFailure.badInput(error.message)
        }
        print(Self.render(runs: runs, fleet: fleet, location: store.location.description), terminator: "")
    }

    /// The listing: a line per kind of name, each name with its count.
    static func render(
        runs: [HistoryRun], fleet: (traces: Int, metrics: [String], keys: [FleetMetadataKey]), location: String
    ) -> String {
        func counted(_ names: [String]) -> String {
            var counts: [String: Int] = [:]
            for name in names { counts[name, default: 0] += 1 }
            guard !counts.isEmpty else { return "none" }
            return counts.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
        }
        var lines = [
            "\(location): \(runs.count) run\(runs.count == 1 ? "" : "s"), \(fleet.traces) fleet "
                + "trace\(fleet.traces == 1 ? "" : "s")"
        ]
        if !runs.isEmpty {
            let times = runs.map(\.metadata.timestamp).filter { $0 > 0 }.sorted()
            if let first = times.first, let last = times.last {
                lines.append("  from \(Self.day(first)) to \(Self.day(last))")
            }
            lines.append("  suites:   " + counted(runs.map(\.metadata.suite)))
            lines.append(
                "  tests:    " + counted(runs.flatMap { run in run.tests.map { "\(run.metadata.suite)/\($0.name)" } }))
            lines.append(
                "  metrics:  "
                    + counted(
                        runs.flatMap { run in
                            run.tests.flatMap { test in test.metrics.map { "\(test.name)/\($0.name)" } }
                        }))
            lines.append("  hosts:    " + counted(runs.map(\.metadata.host)))
            lines.append("  branches: " + counted(runs.map(\.branch)))
            let keys = Set(runs.flatMap(\.metadata.tags.keys)).sorted()
            lines.append(
                "  tags:     "
                    + (keys.isEmpty
                        ? "none"
                        : keys.map { key in "\(key) = " + counted(runs.compactMap { $0.metadata.tags[key] }) }.joined(
                            separator: "; ")))
        }
        if fleet.traces > 0 {
            lines.append("  fleet metrics: " + (fleet.metrics.isEmpty ? "none" : fleet.metrics.joined(separator: ", ")))
            lines.append(
                "  fleet metadata keys: "
                    + (fleet.keys.isEmpty
                        ? "none"
                        : fleet.keys.map {
                            "\($0.key) (\($0.values) value\($0.values == 1 ? "" : "s"), \($0.traces) traces)"
                        }
                        .joined(separator: ", ")))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `2026-11-27` for nanoseconds since 1970.
    static func day(_ nanoseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: Date(timeIntervalSince1970: Double(nanoseconds) / 1e9))
    }
}
