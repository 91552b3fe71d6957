import CStrobe
import Strobe
import StrobeTestSupport

#if StrobeTracing
import Tracing
import StrobeTracing
#endif

/// Each recording call in a loop of its own, under a C name, for counting
/// instructions: `scripts/instruction-counts.sh` runs this section under
/// callgrind and divides each loop's inclusive count by its calls. Wall
/// time on a shared machine varies from run to run; instruction counts do
/// not, so they tell where a call's cost goes and whether a change cut it.
///
/// Run alone, the section prints each loop's wall time per call.
enum InstructionCountBenchmarks {
    /// Calls per loop.
    static let calls = 100_000

    /// Buffers that hold every event of the section, so no loop waits for
    /// the writer.
    static var configuration: TraceConfiguration {
        var configuration = CoreBenchmarks.quietConfiguration()
        configuration.bufferSizePerThread = 512 << 20
        return configuration
    }

    static func run() {
        var figures: [(String, Double)] = []
        CoreBenchmarks.withSession(configuration) {
            // Attach the thread and warm the chunk pool first.
            _ = instructionsBegin(calls)
            _ = instructionsEnd(calls)
            figures.append(("begin", instructionsBegin(calls)))
            figures.append(("end", instructionsEnd(calls)))
            figures.append(("counter", instructionsCounter(calls)))
            figures.append(("beginAsync+end", instructionsAsyncInterval(calls)))
            #if StrobeTracing
            let tracer = StrobeTracer()
            _ = instructionsStrobeSpan(tracer, calls)
            figures.append(("StrobeTracer withSpan", instructionsStrobeSpan(tracer, calls)))
            figures.append(("NoOpTracer withSpan", instructionsNoOpSpan(NoOpTracer(), calls)))
            figures.append(("StrobeTracer withSpan, 1 attribute", instructionsStrobeSpanAttribute(tracer, calls)))
            figures.append(("NoOpTracer withSpan, 1 attribute", instructionsNoOpSpanAttribute(NoOpTracer(), calls)))
            figures.append(("StrobeTracer withSpan, 5 attributes", instructionsStrobeSpanFiveAttributes(tracer, calls)))
            figures.append(
                ("NoOpTracer withSpan, 5 attributes", instructionsNoOpSpanFiveAttributes(NoOpTracer(), calls)))
            #endif
        }
        for (name, nanoseconds) in figures {
            Figure(
                name: "\(name), loop for instruction counts", value: nanoseconds / Double(calls), unit: "ns/call",
                baselineName: "none (count instructions with scripts/instruction-counts.sh)", baselineValue: 1
            ).printLine()
        }
    }
}

@_silgen_name("strobe_instructions_begin") @inline(never)
func instructionsBegin(_ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { Trace.begin("benchmark interval") }
    return Double(cstrobe_monotonic_ns() - start)
}

@_silgen_name("strobe_instructions_end") @inline(never)
func instructionsEnd(_ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { Trace.end() }
    return Double(cstrobe_monotonic_ns() - start)
}

@_silgen_name("strobe_instructions_counter") @inline(never)
func instructionsCounter(_ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for index in 0..<count { Trace.counter("benchmark counter", Int64(index)) }
    return Double(cstrobe_monotonic_ns() - start)
}

@_silgen_name("strobe_instructions_async_interval") @inline(never)
func instructionsAsyncInterval(_ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { Trace.beginAsync("span").end() }
    return Double(cstrobe_monotonic_ns() - start)
}

#if StrobeTracing
@_silgen_name("strobe_instructions_strobe_span") @inline(never)
func instructionsStrobeSpan(_ tracer: StrobeTracer, _ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { tracer.withSpan("span") { _ in } }
    return Double(cstrobe_monotonic_ns() - start)
}

@_silgen_name("strobe_instructions_noop_span") @inline(never)
func instructionsNoOpSpan(_ tracer: NoOpTracer, _ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { tracer.withSpan("span") { _ in } }
    return Double(cstrobe_monotonic_ns() - start)
}

@_silgen_name("strobe_instructions_strobe_span_attribute") @inline(never)
func instructionsStrobeSpanAttribute(_ tracer: StrobeTracer, _ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { tracer.withSpan("span") { span in span.attributes["http.route"] = "/photos/{id}" } }
    return Double(cstrobe_monotonic_ns() - start)
}

@_silgen_name("strobe_instructions_noop_span_attribute") @inline(never)
func instructionsNoOpSpanAttribute(_ tracer: NoOpTracer, _ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { tracer.withSpan("span") { span in span.attributes["http.route"] = "/photos/{id}" } }
    return Double(cstrobe_monotonic_ns() - start)
}

/// A server span's attributes: a request's method, route, status, port and
/// client.
@inline(__always)
func setServerAttributes(_ span: some Span) {
    span.attributes["http.request.method"] = "GET"
    span.attributes["http.route"] = "/photos/{id}"
    span.attributes["http.response.status_code"] = 200
    span.attributes["server.port"] = 8080
    span.attributes["user_agent.original"] = "lens/5.2"
}

@_silgen_name("strobe_instructions_strobe_span_attributes5") @inline(never)
func instructionsStrobeSpanFiveAttributes(_ tracer: StrobeTracer, _ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { tracer.withSpan("span") { span in setServerAttributes(span) } }
    return Double(cstrobe_monotonic_ns() - start)
}

@_silgen_name("strobe_instructions_noop_span_attributes5") @inline(never)
func instructionsNoOpSpanFiveAttributes(_ tracer: NoOpTracer, _ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { tracer.withSpan("span") { span in setServerAttributes(span) } }
    return Double(cstrobe_monotonic_ns() - start)
}
#endif
