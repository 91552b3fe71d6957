// docs/recording.md: "Categories", the declaration and its use.
import Strobe

extension Trace.Category {
    static let media = Trace.Category("media")
}

func recordByCategory(session: TraceSession) throws -> TraceConfiguration {
    var configuration = TraceConfiguration()
    Trace.interval("decode", category: .media) { decode() } // also begin/end, instant, counter, beginAsync
    configuration.categories = ["media", "net.*", "-net.dns"] // default ["*"]; STROBE_TRACE_CATEGORIES=media,net.*
    try session.setCategories(["media"]) // while the session runs
    return configuration
}
