import ArgumentParser
import Foundation
import StrobeHistory
import StrobeHistoryStore
import StrobeJudgement
import StrobeStatistics
import StrobeTrend

/// `strobe trend`: where in a history of runs did each metric change, between
/// which commits, and was it the code or the machine?
struct TrendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trend",
        abstract: "Find where metrics changed in a history of runs: commit range, code or machine, how to confirm.",
        discussion: """
            Reads the runs of a store (--history) or of results files (PATH...). One series per suite, \
            test, metric and group (--group-by; by default the host, when the runs come from several hosts); \
            each run is one value, its processes' median, as `strobe diff` compares them. Runs are in git \
            order (`git rev-list --topo-order --reverse --all`) when --repository, or the current directory, \
            is a git repository holding their commits; else in time order. The runs of one commit on one \
            host are one value.

            Each change is reported with the last run before and the first after, the commit range A..B \
            and its commits, the change with its 95% interval and p-value, regression or improvement, \
            confirmed or "possible, N more runs to confirm", and whether the code or the machine moved \
            it: from the other hosts, and from the reference runs (--reference build=reference: a pinned \
            build run in the same job, left out of the series). Then the commands that confirm it: a \
            worktree of each commit, built (--build-command), and `strobe compare` of the two builds. \
            Marks stored with `strobe history mark` show on the changes they name.

            Exit status: 0 the report was written (whatever it found); 2 bad input.
            """
    )

    @Argument(help: "Results files or directories of them (instead of --history).")
    var paths: [String] = []

    @OptionGroup var history: HistorySourceOptions

    @Option(help: "Only runs of this branch (their branch tag).")
    var branch: String?

    @Option(
        name: .customLong("where"), help: "KEY=VALUE: only runs whose suite, branch, host, commit or tag KEY is VALUE.")
    var filters: [String] = []

    @Option(help: "Only metrics whose TEST/METRIC matches this regular expression.")
    var metric: String?

    @Option(
        name: .customLong("group-by"),
        help: "KEY,...: one series per value of these keys (host, branch, os, cpu, build, or a tag).")
    var groupBy: String?

    /// The grouping keys as given.
    var by: String? { groupBy }

    @Option(help: "KEY=VALUE: the runs that are the machine's control (a pinned build), e.g. build=reference.")
    var reference: String?

    @Option(help: "The git repository holding the runs' commits (default: the current directory, when it is one).")
    var repository: String?

    @OptionGroup var reportOutput: ReportOutputOptions

    @OptionGroup var judgement: JudgementOptions

    @Option(
        name: .customLong("build-command"),
        help: "How a commit's worktree is built, in the confirm commands ({suite}: the suite).")
    var buildCommand = "swift build -c release"

    @Option(
        name: .customLong("suite-executable"), help: "The suite's executable in a built worktree ({suite}: the suite).")
    var suiteExecutable = ".build/release/{suite}"

    @Option(name: .customLong("max-commits"), help: "Commits listed per change.")
    var maxCommits = 10

    /// The first problem with the flags, if any.
    var problem: String? {
        if paths.isEmpty && history.store == nil { return "give a store with --history STORE, or results files" }
        if !paths.isEmpty && history.store != nil { return "give either --history STORE or results files, not both" }
        if let problem = history.problem { return problem }
        for filter in filters + (reference.map { [$0] } ?? []) {
            do { _ = try HistoryFilter(parsing: filter) } catch {
                return error.message.replacingOccurrences(
                    of: "--where \(filter)", with: (filter == reference ? "--reference " : "--where ") + filter)
            }
        }
        if let metric, (try? Regex(metric)) == nil {
            return "--metric: \"\(metric)\" is not a valid regular expression"
        }
        if let by,
            by.split(separator: ",", omittingEmptySubsequences: false).contains(where: {
                $0.trimmingCharacters(in: .whitespaces).isEmpty
            })
        {
            return "--group-by \(by): a key is empty; write e.g. host or host,device"
        }
        if let problem = judgement.problem { return problem }
        guard maxCommits >= 0 else { return "--max-commits must be zero or more, not \(maxCommits)" }
        return nil
    }

    func validate() throws {
        if let problem { throw ValidationError(problem) }
    }

    func run() async throws {
        var options = TrendOptions()
        options.metricPattern = metric
        options.groupBy = by.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        options.reference = try reference.map { try HistoryFilter(parsing: $0) }
        let resolved = judgement.resolved(policy: ComparisonPolicy())
        options.detection.alpha = resolved.alpha
        options.relativeFloor = resolved.minimumEffect
        options.confirm.build = buildCommand
        options.confirm.executable = suiteExecutable
        let git: GitRepository?
        if let repository {
            guard let found = GitRepository(repository) else {
                throw CommandFailure.badInput("--repository \(repository): not a git repository")
            }
            git = found
            options.confirm.repository = repository
        } else {
            git = GitRepository(FileManager.default.currentDirectoryPath)
        }
        if let git {
            do {
                options.commitOrder = try git.commitOrder()
            } catch {
                // A repository without commits orders nothing.
                options.commitOrder = nil
            }
        }
        let (runs, marks, source) = try await load()
        guard runs.count >= 2 else {
            throw CommandFailure.badInput("a trend needs at least two runs, found \(runs.count) in \(source)")
        }
        var report: TrendReport
        do {
            report = try TrendAnalysis.analyze(runs, source: source, marks: marks, options: options)
        } catch {
            throw CommandFailure.badInput(error.message)
        }
        if let git, report.order == "commit" {
            for index in report.changes.indices {
                let change = report.changes[index]
                let listed = git.commits(
                    from: change.lastBefore.commit, to: change.firstAfter.commit, limit: maxCommits)
                report.changes[index].commits = listed.commits
                report.changes[index].moreCommits = listed.more
            }
        }
        let output = reportOutput.path
        switch reportOutput.format {
        case .text: try emit(report.renderText(), to: output)
        case .markdown: try emit(report.renderMarkdown(), to: output)
        case .json: try emit(report.renderJSON(), to: output)
        case .html: try emit(report.renderHTML(flameGraphs: report.flameGraphs(runs: runs)), to: output)
        }
        if output != nil, reportOutput.format != .text {
            print(report.headline)
        }
    }

    /// The runs, the stored marks and a name for where they came from.
    func load() async throws -> (runs: [HistoryRun], marks: [HistoryMark], source: String) {
        var filters: [HistoryFilter] = try filters.map { try HistoryFilter(parsing: $0) }
        if let branch { filters.append(HistoryFilter(.branch, branch)) }
        guard let store = history.store else {
            let entries: [HistoryInput.Entry]
            do {
                entries = try HistoryInput.load(paths)
            } catch {
                throw CommandFailure.badInput(error.message)
            }
            let runs = entries.map { HistoryRun(record: $0.record) }
                .filter { run in filters.allSatisfy { $0.matches(run) } }
                .sorted { ($0.metadata.timestamp, $0.key) < ($1.metadata.timestamp, $1.key) }
            return (runs, [], paths.joined(separator: " "))
        }
        let location: HistoryLocation
        do {
            location = try HistoryLocation.parse(store, passwordFile: history.password.file)
        } catch {
            throw CommandFailure.badInput(error.message)
        }
        let opened: any HistoryStore
        do {
            opened = try await HistoryStores.open(location, access: .readOnly)
        } catch let error as StrobeHistory.HistoryError {
            throw CommandFailure.badInput(error.message)
        }
        do {
            // The stacks are read only for the flame graphs of a page.
            let runs = try await opened.runs(
                HistoryQuery(filters: filters, includeStacks: reportOutput.format == .html))
            let marks = try await opened.marks()
            var total = runs.count
            if runs.isEmpty { total = try await opened.count() }
            await opened.close()
            if runs.isEmpty {
                throw CommandFailure.badInput(
                    total == 0
                        ? "\(location): the store holds no runs (add some with `strobe history add`)"
                        : "\(location): none of its \(total) runs match "
                            + filters.map(\.description).joined(separator: " and "))
            }
            return (runs, marks, location.description)
        } catch let error as StrobeHistory.HistoryError {
            await opened.close()
            throw CommandFailure.badInput(error.message)
        }
    }
}
