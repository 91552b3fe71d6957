import Tracing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What each timed span does inside its body.
enum SpanCase: String, CaseIterable {
    /// `withSpan` and nothing else.
    case plain
    /// One attribute, the route.
    case oneAttribute
    /// A server span's five attributes.
    case fiveAttributes

    /// How the case reads in a figure's name.
    var label: String {
        switch self {
        case .plain: ""
        case .oneAttribute: " with 1 attribute"
        case .fiveAttributes: " with 5 server attributes"
        }
    }

    /// Nanoseconds taken by `count` spans of this case through `tracer`.
    func time(_ tracer: some Tracer, count: Int) -> Double {
        switch self {
        case .plain: timePlainSpans(tracer, count)
        case .oneAttribute: timeSpansWithOneAttribute(tracer, count)
        case .fiveAttributes: timeSpansWithFiveAttributes(tracer, count)
        }
    }
}

/// The monotonic clock, in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

@inline(never)
private func timePlainSpans(_ tracer: some Tracer, _ count: Int) -> Double {
    let start = monotonicNanoseconds()
    for _ in 0..<count { tracer.withSpan("span") { _ in } }
    return Double(monotonicNanoseconds() - start)
}

@inline(never)
private func timeSpansWithOneAttribute(_ tracer: some Tracer, _ count: Int) -> Double {
    let start = monotonicNanoseconds()
    for _ in 0..<count {
        tracer.withSpan("span") { span in span.attributes["http.route"] = "/photos/{id}" }
    }
    return Double(monotonicNanoseconds() - start)
}

@inline(never)
private func timeSpansWithFiveAttributes(_ tracer: some Tracer, _ count: Int) -> Double {
    let start = monotonicNanoseconds()
    for _ in 0..<count { tracer.withSpan("span") { span in setServerAttributes(span) } }
    return Double(monotonicNanoseconds() - start)
}

/// The attributes of a server span, as the instruction-count benchmarks set them.
private func setServerAttributes(_ span: some Span) {
    span.attributes["http.request.method"] = "GET"
    span.attributes["http.route"] = "/photos/{id}"
    span.attributes["http.response.status_code"] = 200
    span.attributes["server.port"] = 8080
    span.attributes["user_agent.original"] = "lens/5.2"
}
