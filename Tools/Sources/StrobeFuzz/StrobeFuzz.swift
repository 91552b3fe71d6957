// `make fuzz`: coverage-guided fuzzing of the readers of untrusted files.
//
//   StrobeFuzz reader|results|csv|recover [libFuzzer flags] [corpus directories]
//
// Built with `--sanitize=fuzzer` and its entry point renamed (see the
// Makefile's `fuzz`), libFuzzer's own `main` drives the chosen target
// through `LLVMFuzzerInitialize` and `LLVMFuzzerTestOneInput`. Built
// normally, the program reads every file named (or found in a directory
// named) and runs the target on it once: a replay of a corpus.
//
//   reader   TraceReader.read(bytes:) and TraceSummary of the result, and
//            CPUProfile.read(bytes:) with its top functions and folded stacks
//   results  ResultsFile.decode (the results-file reader)
//   csv      the CSV samples reader behind `strobe diff`, through SampleSet.load
//   recover  CrashRecovery.trace(fromCrashFile:), the reader behind `strobe recover`

import Foundation
import StrobeCrashRecovery
import StrobeDiff
import StrobeJudgement
import StrobeReader
import StrobeResults

enum FuzzTarget: String, CaseIterable {
    case reader, results, csv, recover

    func run(_ bytes: [UInt8]) {
        switch self {
        case .reader:
            let trace = TraceReader.read(bytes: bytes, source: "fuzz")
            let summary = TraceSummary(trace: trace, frameBudget: 16_670_000)
            _ = summary.renderText()
            let profile = CPUProfile.read(bytes: bytes)
            _ = profile.topFunctions(of: profile.samples(within: Array(trace.intervals)), limit: 10)
            _ = profile.folded()
        case .results:
            _ = try? ResultsFile.decode(bytes, path: "fuzz")
        case .csv:
            // The CSV reader takes files; each input goes through one.
            let path = csvPath
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            _ = try? SampleSet.load([path])
        case .recover:
            _ = try? CrashRecovery.trace(fromCrashFile: bytes, path: "fuzz")
        }
    }
}

/// The target libFuzzer's callback runs; set once, before fuzzing starts.
nonisolated(unsafe) var target = FuzzTarget.reader
let csvPath = NSTemporaryDirectory() + "strobe-fuzz-\(getpid()).csv"

/// libFuzzer calls this first: the first argument names the target and is
/// removed before libFuzzer reads its flags.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>
) -> Int32 {
    guard argc.pointee >= 2, let name = argv.pointee[1], let chosen = FuzzTarget(rawValue: String(cString: name)) else {
        FileHandle.standardError.write(
            Data("usage: StrobeFuzz reader|results|csv|recover [libFuzzer flags] [corpus]\n".utf8))
        exit(2)
    }
    target = chosen
    for index in 1..<Int(argc.pointee) { argv.pointee[index] = argv.pointee[index + 1] }
    argc.pointee -= 1
    return 0
}

/// libFuzzer's target: one input through the chosen reader.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 || data == nil ? [] : [UInt8](UnsafeBufferPointer(start: data, count: size))
    target.run(bytes)
    return 0
}

@main
enum StrobeFuzz {
    static func main() {
        var arguments = CommandLine.arguments
        guard arguments.count >= 2, let chosen = FuzzTarget(rawValue: arguments[1]) else {
            FileHandle.standardError.write(
                Data("usage: StrobeFuzz reader|results|csv|recover [libFuzzer flags] [corpus]\n".utf8))
            exit(2)
        }
        target = chosen
        arguments.remove(at: 1)
        replay(arguments.dropFirst().filter { !$0.hasPrefix("-") })
    }

    /// Without libFuzzer: runs the target on the files named, and on the
    /// files in the directories named.
    static func replay(_ paths: [String]) {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("StrobeFuzz: \(path): no such file or directory\n".utf8))
                exit(2)
            }
            if isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                files += names.sorted().map { path + "/" + $0 }
            } else {
                files.append(path)
            }
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            target.run([UInt8](data))
        }
        try? FileManager.default.removeItem(atPath: csvPath)
        print("StrobeFuzz: \(target.rawValue): replayed \(files.count) inputs without libFuzzer")
    }
}
