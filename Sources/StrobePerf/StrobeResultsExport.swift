// The results model and file are part of the runner's API: a suite's run is
// a `PerfRun`, written as a results file. Importing StrobePerf brings them.
@_exported import StrobeResults
