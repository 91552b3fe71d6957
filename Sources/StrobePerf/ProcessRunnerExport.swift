// The process runner, its options and errors, and the trace metrics are
// part of the runner's API: code that imports StrobePerf sees them as
// before they moved into a module of their own.
@_exported import StrobeProcessRunner
