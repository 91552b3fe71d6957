#if !StrobeTracing
/// Present only with the package trait `StrobeTracing`.
///
/// The bridge to swift-distributed-tracing is built only when the app enables
/// the trait, so that apps without it never resolve swift-distributed-tracing:
///
/// ```swift
/// .package(url: "<strobe repository>", from: "<version>", traits: ["StrobeTracing"])
/// ```
@available(
    *, unavailable,
    message:
        "StrobeTracing needs the package trait \"StrobeTracing\": add traits: [\"StrobeTracing\"] to the strobe package dependency"
)
public struct StrobeTracer {}
#endif
