import ArgumentParser
import Foundation
import StrobeHistory
import StrobeHistoryStore

/// `strobe history mark RUN_OR_RANGE --confirmed|--dismissed`: a verdict on
/// a change point, shown by every later `strobe trend`.
struct HistoryMarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mark",
        abstract: "Mark a change point as confirmed or dismissed; `strobe trend` shows the mark.",
        discussion: """
            TARGET is the change's range as `strobe trend` prints it, A..B: the commit (or run id) of the \
            last run before the change and of the first after it; commits may be abbreviated to 4 hex \
            digits or more. One commit or run id names the first run after. --series narrows the mark to \
            one series (SUITE/TEST/METRIC or TEST/METRIC); without it, every series changed there. A \
            later mark of the same target and series replaces the earlier one.
            """
    )

    @Argument(help: "A..B, or one commit or run id.")
    var target: String

    @Flag(help: "The change is real.")
    var confirmed = false

    @Flag(help: "The change is noise, or an accepted cost.")
    var dismissed = false

    @Option(help: "Only this series: SUITE/TEST/METRIC or TEST/METRIC.")
    var series: String?

    @Option(help: "Why, in a sentence.")
    var note = ""

    @OptionGroup var options: HistoryStoreOptions

    /// The mark the flags describe, at `time`.
    func mark(at time: Int64) -> HistoryMark {
        HistoryMark(
            target: target, series: series ?? "", verdict: confirmed ? .confirmed : .dismissed, note: note,
            markedAt: time)
    }

    func validate() throws {
        guard confirmed != dismissed else { throw ValidationError("give one of --confirmed and --dismissed") }
        do { try mark(at: 0).validate() } catch { throw ValidationError(error.message) }
    }

    func run() async throws {
        let mark = mark(at: Int64(Date().timeIntervalSince1970 * 1e9))
        let location = try HistoryLocation.parse(options.store, passwordFile: options.password.file)
        if case .sqlite(let path) = location, !FileManager.default.fileExists(atPath: path) {
            throw CommandFailure.badInput("\(path): no such store (`strobe history add` creates one)")
        }
        let store = try await options.open(.readWrite)
        do {
            let (before, after) = mark.sides
            for side in [before, after].compactMap({ $0 }) where !(try await Self.names(side, in: store)) {
                throw CommandFailure.badInput(
                    "\(location): no run has the commit or run id \"\(side)\"; give them as `strobe trend` prints them")
            }
            try await store.addMark(mark)
            await store.close()
        } catch let error as HistoryError {
            await store.close()
            throw CommandFailure.badInput(error.message)
        } catch {
            await store.close()
            throw error
        }
        print(
            "\(mark.target)\(mark.series.isEmpty ? "" : " (\(mark.series))") marked \(mark.verdict.rawValue) in "
                + "\(location)"
        )
    }

    /// Whether a run of `store` has `text` as its run id, its commit, or
    /// its commit's first 4 hex digits or more.
    static func names(_ text: String, in store: any HistoryStore) async throws -> Bool {
        if try await !store.runs(HistoryQuery(filters: [HistoryFilter(.commit, text)])).isEmpty { return true }
        return try await store.runs(HistoryQuery()).contains { run in
            run.key == text || run.metadata.runID == text || (text.count >= 4 && run.metadata.gitCommit.hasPrefix(text))
        }
    }
}
