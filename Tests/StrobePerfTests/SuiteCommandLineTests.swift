import Foundation
import StrobeProcessRunner
import StrobeTestTraits
import Testing

@testable import StrobePerf

/// A perf suite's own command line: every option in both spellings, each
/// kind of bad input refused with a message naming the option and value,
/// and a help text that lists every default.
@Suite(.processWide)
struct SuiteCommandLineTests {
    /// Every option with a value that differs from its default, as
    /// `--name value` arguments; the `=` form is made from them.
    static let everyOption: [(name: String, value: String?)] = [
        ("--filter", "lens.*"), ("--iterations", "20"), ("--warmup", "0"), ("--results-dir", "out/dir"),
        ("--tag", "device=pixel-8"),
        ("--tag", "build=pr"), ("--keep-traces", nil), ("--round", "4"), ("--run-id", "run 7"),
        ("--profile", nil), ("--profile-rate", "250"), ("--instructions", "simulated"),
    ]

    static func check(_ options: PerfSuiteOptions) {
        #expect(options.filter == "lens.*")
        #expect(options.iterations == 20)
        #expect(options.warmup == 0)
        #expect(options.resultsDirectory == "out/dir")
        #expect(options.tags == ["device=pixel-8", "build=pr"])
        #expect((try? options.parsedTags()) == ["device": "pixel-8", "build": "pr"])
        #expect(options.keepTraces)
        #expect(options.round == 4)
        #expect(options.runID == "run 7")
        #expect(options.profileRate == 250)
        #expect(options.instructions == .simulated)
        #expect(!options.helpRequested)
    }

    @Test func everyOptionIsReadWithASpaceOrAnEqualsSign() throws {
        let spaced = Self.everyOption.flatMap { [$0.name] + ($0.value.map { [$0] } ?? []) }
        Self.check(try PerfSuiteOptions.parse(spaced))
        let joined = Self.everyOption.map { option in option.value.map { "\(option.name)=\($0)" } ?? option.name }
        Self.check(try PerfSuiteOptions.parse(joined))

        var budget = try PerfSuiteOptions.parse(["--time-budget", "2500ms"])
        #expect(budget.timeBudget == .milliseconds(2500))
        #expect(try budget.stopRule() == .timeBudget(seconds: 2.5))
        budget = try PerfSuiteOptions.parse(["--time-budget=0.5m"])
        #expect(try budget.stopRule() == .timeBudget(seconds: 30))
        let precision = try PerfSuiteOptions.parse(["--p90-precision", "5"])
        #expect(precision.p90Precision == 5)
        #expect(try precision.stopRule() == .p90Precision(relativeWidth: 0.05))
        #expect(try PerfSuiteOptions.parse(["--p90-precision=2.5"]).p90Precision == 2.5)
        // A value that starts with a dash but not two is a value.
        #expect(try PerfSuiteOptions.parse(["--filter", "-h"]).filter == "-h")
        // The = form takes a value that starts with --.
        #expect(try PerfSuiteOptions.parse(["--results-dir=--odd"]).resultsDirectory == "--odd")
        // A repeated option keeps its last value (strobe compare appends its
        // own --iterations after the suite's command).
        #expect(try PerfSuiteOptions.parse(["--iterations", "5", "--iterations", "7"]).iterations == 7)
    }

    @Test func optionsGiveTheArgumentsThatGiveThemBack() throws {
        let spaced = Self.everyOption.flatMap { [$0.name] + ($0.value.map { [$0] } ?? []) }
        let options = try PerfSuiteOptions.parse(spaced)
        #expect(try PerfSuiteOptions.parse(options.arguments) == options)
        #expect(PerfSuiteOptions().arguments.isEmpty)
        var warm = PerfSuiteOptions()
        warm.warmup = 0
        warm.profileRate = PerfSuiteOptions.defaultProfileRate
        #expect(warm.arguments == ["--warmup", "0", "--profile"])
        // Durations go out with their unit, as the suite reads them.
        var budget = PerfSuiteOptions()
        budget.timeBudget = .milliseconds(1500)
        #expect(budget.arguments == ["--time-budget", "1500ms"])
        #expect(try PerfSuiteOptions.parse(budget.arguments) == budget)
        budget.timeBudget = .seconds(90)
        #expect(budget.arguments == ["--time-budget", "90s"])
        #expect(try PerfSuiteOptions.parse(budget.arguments) == budget)
    }

    @Test func profileAloneSamplesAtTheDefaultRate() throws {
        #expect(try PerfSuiteOptions.parse(["--profile"]).profileRate == PerfSuiteOptions.defaultProfileRate)
        #expect(try PerfSuiteOptions.parse([]).profileRate == nil)
        #expect(try PerfSuiteOptions.parse(["--profile-rate", "99", "--profile"]).profileRate == 99)
    }

    @Test func instructionsTakeOneOfFiveModes() throws {
        #expect(try PerfSuiteOptions.parse([]).instructions == .auto)
        for mode in InstructionCounting.allCases {
            #expect(try PerfSuiteOptions.parse(["--instructions", mode.rawValue]).instructions == mode)
        }
        #expect(throws: SuiteCommandLineError.self) { try PerfSuiteOptions.parse(["--instructions", "cycles"]) }
        do {
            _ = try PerfSuiteOptions.parse(["--instructions", "cycles"])
        } catch {
            #expect("\(error)".contains("--instructions"))
            #expect("\(error)".contains("expected auto, hardware, simulated, emulated or off"))
        }
    }

    @Test func theTestsCoverEveryOptionInTheTable() {
        let tested = Set(Self.everyOption.map(\.name) + ["--time-budget", "--p90-precision"])
        #expect(Set(SuiteCommandLine.all.map(\.name)) == tested)
    }

    @Test func noArgumentsGiveTheDefaults() throws {
        let options = try PerfSuiteOptions.parse([])
        #expect(options == PerfSuiteOptions())
        #expect(options.warmup == 2)
        #expect(options.resultsDirectory == ".strobe/results")
        #expect(try options.stopRule() == .iterations(PerfSuiteOptions.defaultIterations))
        #expect(
            !options.keepTraces && options.tags.isEmpty && options.filter == nil && options.round == nil
                && options.runID == nil)
    }

    /// The message for each kind of bad input.
    static let refused: [(arguments: [String], message: String)] = [
        // Unknown options, with a suggestion when one is near.
        (["--iteration", "3"], "--iteration: unknown option (did you mean --iterations?)"),
        (["--bogus"], "--bogus: unknown option (--help lists every option)"),
        (["--colour=red"], "--colour red: unknown option (--help lists every option)"),
        (["-x"], "-x: unknown option (--help lists every option)"),
        (["stray"], "stray: unexpected argument"),
        // Missing values.
        (["--iterations"], "--iterations: missing value N"),
        (["--results-dir", "--keep-traces"], "--results-dir: missing value DIR"),
        (["--tag"], "--tag: missing value KEY=VALUE"),
        // A value given to a flag that takes none.
        (["--keep-traces=yes"], "--keep-traces yes: takes no value"),
        // Numbers that are not numbers.
        (["--iterations", "abc"], "--iterations abc: not a whole number"),
        (["--iterations=2.5"], "--iterations 2.5: not a whole number"),
        (["--warmup", "two"], "--warmup two: not a whole number"),
        (["--round", "1st"], "--round 1st: not a whole number"),
        (
            ["--time-budget", "soon"],
            "--time-budget soon: is not a duration such as 16.67ms, 30s or 3m (units: ns, µs, ms, s, m, h)"
        ),
        (
            ["--time-budget", "inf"],
            "--time-budget inf: is not a duration such as 16.67ms, 30s or 3m (units: ns, µs, ms, s, m, h)"
        ),
        (["--p90-precision", "nan"], "--p90-precision nan: not a number"),
        // Numbers out of range.
        (["--iterations", "0"], "--iterations 0: must be positive"),
        (["--warmup", "-1"], "--warmup -1: must be zero or more"),
        (["--round", "-2"], "--round -2: must be zero or more"),
        (["--time-budget", "0s"], "--time-budget 0s: is not a positive duration such as 16.67ms, 30s or 3m"),
        (["--p90-precision", "-5"], "--p90-precision -5: must be positive"),
        // Values of the wrong shape.
        (["--tag", "novalue"], "--tag novalue: expected key=value"),
        (["--tag", "=x"], "--tag =x: expected key=value"),
        (["--run-id", ""], "--run-id \"\": must not be empty"),
        (["--results-dir="], "--results-dir \"\": must not be empty"),
        // The spellings of before, refused with the one to use now.
        (
            ["--time-budget", "30"],
            "--time-budget 30: has no unit; write it with one: 30ms, 30s or 30m (ns, µs, ms, s, m, h)"
        ),
        (["--output", "out"], "--output: is now --results-dir DIR"),
        (["--output=out"], "--output out: is now --results-dir DIR"),
        // Options that exclude each other.
        (
            ["--iterations", "3", "--time-budget", "2s"],
            "--time-budget 2s: conflicts with --iterations 3: choose one of --iterations, --time-budget and "
                + "--p90-precision"
        ),
        (["--profile-rate", "0"], "--profile-rate 0: must be from 1 to 10000 (hertz)"),
        (["--profile-rate", "fast"], "--profile-rate fast: not a whole number of hertz"),
        // The first problem is the one reported.
        (["--iterations", "x", "--warmup", "y"], "--iterations x: not a whole number"),
    ]

    @Test func badInputIsRefusedNamingTheOptionAndValue() {
        for (arguments, message) in Self.refused {
            do {
                let options = try PerfSuiteOptions.parse(arguments)
                Issue.record("\(arguments) was accepted as \(options)")
            } catch {
                #expect(error.description == message, "\(arguments)")
            }
        }
    }

    @Test func aFilterThatIsNoRegularExpressionIsRefused() {
        let error = #expect(throws: SuiteCommandLineError.self) {
            try PerfSuiteOptions.parse(["--filter", "(unclosed"])
        }
        #expect(error?.flag == "--filter")
        #expect(error?.value == "(unclosed")
        #expect(error?.description.hasPrefix("--filter (unclosed: not a regular expression") == true)
    }

    @Test func helpWinsOverEverythingElse() throws {
        #expect(try PerfSuiteOptions.parse(["--help"]).helpRequested)
        #expect(try PerfSuiteOptions.parse(["-h"]).helpRequested)
        #expect(try PerfSuiteOptions.parse(["--bogus", "--iterations", "0", "-h"]).helpRequested)
    }

    /// `text` with every run of spaces and line breaks made one space, so
    /// wrapped help lines read as one.
    static func flattened(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    @Test func helpListsEveryOptionWithItsDefault() throws {
        let suite = PerfSuite("Lens", tests: [PerfTest("capture frame") { _ in }, PerfTest("apply lens") { _ in }])
        let help = suite.helpText(command: "LensPerfTests")
        let flat = Self.flattened(help)
        #expect(help.contains("Usage: LensPerfTests [options]"))
        #expect(flat.contains("Tests: capture frame, apply lens"))
        for option in SuiteCommandLine.all {
            let entry = [option.name, option.valueName, option.help, "(default: \(option.defaultValue))"].compactMap {
                $0
            }
            #expect(flat.contains(entry.joined(separator: " ")), "\(option.name)")
        }
        #expect(flat.contains("-h, --help Show this help and exit."))
        // The defaults shown are the ones a command line without options gets.
        let defaults = try PerfSuiteOptions.parse([])
        #expect(
            flat.contains("--warmup N Warm-up iterations per test, run and discarded. (default: \(defaults.warmup))"))
        #expect(
            flat.contains(
                "--results-dir DIR Directory for the results file (and the kept traces). "
                    + "(default: \(defaults.resultsDirectory))"))
        guard case .iterations(let count) = try defaults.stopRule() else {
            Issue.record("the default stop rule is not a count")
            return
        }
        #expect(flat.contains("--iterations N Measured iterations per test. (default: \(count),"))
        #expect(flat.contains("(default: \(defaults.keepTraces ? "on" : "off"))"))
        for line in help.split(separator: "\n") { #expect(line.count <= 100, "\(line)") }
    }

    @Test func theSuiteExitsWithStatusTwoAndTheMessageOnStandardError() async {
        let suite = PerfSuite("Lens", tests: [PerfTest("capture frame") { _ in }])
        var output: [String] = []
        var errors: [String] = []
        let status = await suite.runCommandLine(
            ["--iterations", "many"], command: "LensPerfTests", standardOutput: { output.append($0) },
            standardError: { errors.append($0) })
        #expect(status == 2)
        #expect(output.isEmpty)
        #expect(
            errors == [
                "LensPerfTests: --iterations many: not a whole number\nRun LensPerfTests --help to see every option."
            ])

        errors = []
        let help = await suite.runCommandLine(
            ["--help"], command: "LensPerfTests", standardOutput: { output.append($0) },
            standardError: { errors.append($0) })
        #expect(help == 0)
        #expect(output == [suite.helpText(command: "LensPerfTests")])
        #expect(errors.isEmpty)
    }

    @Test func aFilterThatMatchesNoTestIsRefusedByName() async {
        let suite = PerfSuite("Lens", tests: [PerfTest("capture frame") { _ in }, PerfTest("apply lens") { _ in }])
        var errors: [String] = []
        let status = await suite.runCommandLine(
            ["--filter", "^decode", "--results-dir", NSTemporaryDirectory() + "strobe-unused-\(getpid())"],
            command: "LensPerfTests",
            standardOutput: { _ in }, standardError: { errors.append($0) })
        #expect(status == 2)
        #expect(errors == ["LensPerfTests: --filter ^decode: matches none of the tests (capture frame, apply lens)"])
    }
}
