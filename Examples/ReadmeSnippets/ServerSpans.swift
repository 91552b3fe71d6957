#if StrobeTracing
// docs/recording.md: "Spans from server libraries".
import StrobeTracing
import Tracing

func fetchThroughASpan(id: String, client: PhotoClient) async throws -> Photo {
    InstrumentationSystem.bootstrap(StrobeTracer())
    let photo = try await withSpan("fetch photo") { span in
        span.attributes["photo.id"] = id
        return try await client.fetch(id)
    }
    return photo
}
#endif
