import Foundation
import StrobeProcessRunner
import StrobeResults

/// The options a perf suite takes on its command line: the one table that
/// both ``PerfSuiteOptions/parse(_:)`` and the help text are made from.
enum SuiteCommandLine {
    /// One option: its name, the placeholder of its value (nil for a flag
    /// that takes none), what it does and its default, and how it sets the
    /// options from a value (returning the problem, if any).
    struct Option: Sendable {
        var name: String
        var valueName: String?
        var help: String
        var defaultValue: String
        var apply: @Sendable (inout PerfSuiteOptions, String) -> String?
    }

    static let all: [Option] = {
        let defaults = PerfSuiteOptions()
        return [
            Option(
                name: "--filter", valueName: "REGEX",
                help: "Run only the tests whose names match this regular expression.",
                defaultValue: "every test"
            ) { options, value in
                options.filter = value
                return nil
            },
            Option(
                name: "--iterations", valueName: "N", help: "Measured iterations per test.",
                defaultValue:
                    "\(PerfSuiteOptions.defaultIterations), when neither --time-budget nor --p90-precision is given"
            ) { options, value in
                guard let count = wholeNumber(value) else { return "not a whole number" }
                options.iterations = count
                return nil
            },
            Option(
                name: "--warmup", valueName: "N", help: "Warm-up iterations per test, run and discarded.",
                defaultValue: "\(defaults.warmup)"
            ) { options, value in
                guard let count = wholeNumber(value) else { return "not a whole number" }
                options.warmup = count
                return nil
            },
            Option(
                name: "--time-budget", valueName: "SECONDS",
                help: "Iterate for this many seconds per test instead of a count.",
                defaultValue: "none"
            ) { options, value in
                guard let parsed = number(value) else { return "not a number of seconds" }
                options.timeBudget = parsed
                return nil
            },
            Option(
                name: "--p90-precision", valueName: "PCT",
                help:
                    "Iterate until the 95% confidence interval of the p90 of wall time is narrower than PCT percent of it.",
                defaultValue: "none"
            ) { options, value in
                guard let parsed = number(value) else { return "not a number" }
                options.p90Precision = parsed
                return nil
            },
            Option(
                name: "--output", valueName: "DIR", help: "Directory for the results file (and the kept traces).",
                defaultValue: defaults.output
            ) { options, value in
                options.output = value
                return nil
            },
            Option(
                name: "--tag", valueName: "KEY=VALUE",
                help: "A dimension recorded with the run, such as device=pixel-8; repeatable.",
                defaultValue: "none"
            ) { options, value in
                options.tags.append(value)
                return nil
            },
            Option(
                name: "--keep-traces", valueName: nil, help: "Keep each iteration's trace under DIR/traces/SUITE/TEST.",
                defaultValue: defaults.keepTraces ? "on" : "off"
            ) { options, _ in
                options.keepTraces = true
                return nil
            },
            Option(
                name: "--profile", valueName: nil,
                help: "Sample the measure blocks' call stacks and keep them per test in the results.",
                defaultValue: "off"
            ) { options, _ in
                options.profileRate = options.profileRate ?? PerfSuiteOptions.defaultProfileRate
                return nil
            },
            Option(
                name: "--profile-rate", valueName: "HZ", help: "The rate --profile samples at (implies --profile).",
                defaultValue: "\(PerfSuiteOptions.defaultProfileRate)"
            ) { options, value in
                guard let rate = wholeNumber(value) else { return "not a whole number of hertz" }
                options.profileRate = rate
                return nil
            },
            Option(
                name: "--instructions", valueName: "MODE",
                help:
                    "Count the measure blocks' instructions: auto (the hardware counter where there is one), "
                    + "hardware, simulated (under Valgrind's callgrind, counts only), emulated (under QEMU, "
                    + "counts only) or off.",
                defaultValue: defaults.instructions.rawValue
            ) { options, value in
                guard let mode = InstructionCounting(rawValue: value) else {
                    return "expected auto, hardware, simulated, emulated or off"
                }
                options.instructions = mode
                return nil
            },
            Option(
                name: "--round", valueName: "N", help: "The round of a strobe compare experiment this run belongs to.",
                defaultValue: "none"
            ) { options, value in
                guard let count = wholeNumber(value) else { return "not a whole number" }
                options.round = count
                return nil
            },
            Option(
                name: "--run-id", valueName: "ID", help: "An id for this run, written to the results file.",
                defaultValue: "a fresh one per process"
            ) { options, value in
                options.runID = value
                return nil
            },
        ]
    }()

    static let helpFlags: Set<String> = ["--help", "-h"]

    static func wholeNumber(_ text: String) -> Int? {
        Int(text)
    }

    static func number(_ text: String) -> Double? {
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// Reads `arguments`: `--name value` or `--name=value`, each option at
    /// most once except `--tag` (a repeated one keeps its last value), a
    /// value that starts with `--` only in the `=` form. `--help` or `-h`
    /// anywhere asks for help, whatever else is wrong.
    static func parse(_ arguments: [String]) throws(SuiteCommandLineError) -> PerfSuiteOptions {
        var options = PerfSuiteOptions()
        var firstError: SuiteCommandLineError?
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if helpFlags.contains(argument) {
                options.helpRequested = true
                continue
            }
            guard argument.hasPrefix("-") else {
                firstError =
                    firstError ?? SuiteCommandLineError(flag: nil, value: argument, problem: "unexpected argument")
                continue
            }
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let option = option(named: name) else {
                firstError =
                    firstError
                    ?? SuiteCommandLineError(flag: name, value: inlineValue, problem: unknownOptionProblem(name))
                continue
            }
            guard option.valueName != nil else {
                if let inlineValue {
                    firstError =
                        firstError ?? SuiteCommandLineError(flag: name, value: inlineValue, problem: "takes no value")
                } else {
                    _ = option.apply(&options, "")
                }
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < arguments.count, !arguments[index].hasPrefix("--") {
                value = arguments[index]
                index += 1
            } else {
                firstError =
                    firstError
                    ?? SuiteCommandLineError(flag: name, value: nil, problem: "missing value \(option.valueName ?? "")")
                continue
            }
            if let problem = option.apply(&options, value) {
                firstError = firstError ?? SuiteCommandLineError(flag: name, value: value, problem: problem)
            }
        }
        if options.helpRequested { return options }
        if let firstError { throw firstError }
        try options.validate()
        return options
    }

    static func option(named name: String) -> Option? {
        all.first { $0.name == name }
    }

    /// "unknown option", with the nearest option's name when one is a
    /// likely typo (at most two edits away).
    static func unknownOptionProblem(_ name: String) -> String {
        let nearest = all.map { ($0.name, editDistance(name, $0.name)) }.min { $0.1 < $1.1 }
        if let nearest, nearest.1 <= 2 { return "unknown option (did you mean \(nearest.0)?)" }
        return "unknown option (--help lists every option)"
    }

    /// The Levenshtein distance between two strings, in characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var previous = Array(0...b.count)
        for i in a.indices {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for j in b.indices {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (a[i] == b[j] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// The help text: usage, the suite's tests, every option with its
    /// default, and the exit statuses.
    static func helpText(command: String, suite: String, tests: [String]) -> String {
        var lines = [
            "\(suite): a perf-test suite. Runs its tests, each iteration in its own trace session,",
            "and writes a results file for strobe diff and strobe compare.",
            "",
            "Usage: \(command) [options]",
            "",
            "Tests: " + (tests.isEmpty ? "none" : tests.joined(separator: ", ")),
            "",
            "Options:",
        ]
        // Each option's default on a line of its own under what it does.
        var entries = all.map { option in
            (
                option.name + (option.valueName.map { " " + $0 } ?? ""),
                [option.help, "(default: \(option.defaultValue))"]
            )
        }
        entries.append(("-h, --help", ["Show this help and exit."]))
        let column = (entries.map(\.0.count).max() ?? 0) + 4
        for (label, paragraphs) in entries {
            let wrapped = paragraphs.flatMap { wrap($0, width: max(100 - column, 40)) }
            for (index, line) in wrapped.enumerated() {
                let head = index == 0 ? "  " + label : ""
                lines.append(head.padding(toLength: column, withPad: " ", startingAt: 0) + line)
            }
        }
        lines += [
            "",
            "A value may also follow an equals sign (--iterations=20); a value that starts with -- must.",
            "Exit status: 0 when every test passed, 1 when a test failed, 2 on a bad option or when the",
            "results cannot be written.",
        ]
        return lines.joined(separator: "\n")
    }

    /// `text` broken into lines of at most `width` characters, at spaces.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}

extension PerfSuiteOptions {
    /// Reads a suite's command line (without the program's name).
    ///
    /// Each option is `--name value` or `--name=value`; `--tag` may be
    /// repeated, any other option given twice keeps its last value. `--help`
    /// or `-h` anywhere sets ``helpRequested`` and skips every check.
    /// Otherwise the first unknown option, missing value, bad number or
    /// out-of-range value throws, naming the option and the value.
    public static func parse(_ arguments: [String]) throws(SuiteCommandLineError) -> PerfSuiteOptions {
        try SuiteCommandLine.parse(arguments)
    }
}
