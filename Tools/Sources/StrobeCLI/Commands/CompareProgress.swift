import Foundation
import StrobeCompare
import StrobeDiff
import StrobeJudgement
import StrobeStatistics

/// The progress of a comparison on standard error. On a terminal, one line
/// rewritten after every round. Elsewhere (a CI log), a line per look and at
/// most one line every ``quietInterval`` seconds between looks.
final class CompareProgress {
    private let budget: Double
    private let interactive: Bool
    private let write: (String) -> Void
    private var lastLine = -Double.infinity

    /// Seconds between two progress lines that are not looks, in a log.
    static let quietInterval = 10.0

    /// Progress on standard error, rewritten in place on a terminal outside CI.
    convenience init(budget: Double) {
        self.init(
            budget: budget,
            interactive: isatty(STDERR_FILENO) != 0 && ProcessInfo.processInfo.environment["CI"] != "true",
            write: { FileHandle.standardError.write(Data($0.utf8)) })
    }

    /// Progress written through `write`, as on a terminal when `interactive`.
    init(budget: Double, interactive: Bool, write: @escaping (String) -> Void) {
        self.budget = budget
        self.interactive = interactive
        self.write = write
    }

    /// Shows what the comparison just did.
    func show(_ event: InterleavedComparison<ProcessRounds>.Event) {
        switch event {
        case .round(let round, let elapsed): self.round(round, elapsed: elapsed)
        case .look(let look, let decided, let gated, let elapsed):
            self.look(look, decided: decided, of: gated, elapsed: elapsed)
        case .note(let line): note(line)
        case .counted(let elapsed): note("instructions counted, \(Self.clock(elapsed)) of \(Self.clock(budget))")
        }
    }

    /// After a round that was not a look.
    func round(_ round: Int, elapsed now: Double) {
        let line = "round \(round), \(Self.clock(now)) of \(Self.clock(budget))"
        if interactive {
            write("\r" + line + "\u{1B}[K")
        } else if now - lastLine >= Self.quietInterval {
            lastLine = now
            write("compare: " + line + "\n")
        }
    }

    /// After a look.
    func look(_ look: SequentialDesign.Look, decided: Int, of gated: Int, elapsed now: Double) {
        let line =
            "round \(look.rounds), \(Self.clock(now)) of \(Self.clock(budget)): look \(look.number), "
            + "\(decided) of \(gated) gated metrics decided"
        if interactive {
            write("\r" + line + "\u{1B}[K")
        } else {
            lastLine = now
            write("compare: " + line + "\n")
        }
    }

    func clear() {
        if interactive { write("\r\u{1B}[K") }
    }

    /// A line of its own, kept above the progress line on a terminal.
    func note(_ line: String) {
        write((interactive ? "\r\u{1B}[K" : "") + "compare: " + line + "\n")
    }

    func summary(rounds: Int, elapsed: Double, report: DiffReport) {
        var line = "compare: \(rounds) rounds in \(Self.clock(elapsed))"
        if let look = report.look {
            line += ", look \(look.number) at level \(String(format: "%.2g", look.alpha))"
            if !report.undecided.isEmpty {
                line +=
                    look.isFinal
                    ? "; the budget ran out with \(Self.gatedMetrics(report.undecided.count)) inconclusive"
                    : "; \(Self.gatedMetrics(report.undecided.count)) inconclusive, out of the budget's reach"
            }
            let settled = Set(report.settled.map { MetricDefaults.testPart(of: $0.name) + "\u{0}" + $0.group }).count
            if settled > 0 {
                line += "; the counts settled the time of \(settled) CPU-bound test\(settled == 1 ? "" : "s")"
            }
        }
        write(line + "\n")
        // Each changed test with the metric that decided it.
        for test in report.tests where test.outcome == .slower || test.outcome == .faster {
            write("compare: \(test.decisionLine)\n")
            if let path = test.criticalPath { write("compare:   \(path)\n") }
        }
    }

    /// "1 gated metric", "3 gated metrics".
    static func gatedMetrics(_ count: Int) -> String { "\(count) gated metric\(count == 1 ? "" : "s")" }

    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        return String(format: "%d:%02d", total / 60, total % 60)
    }
}
