#if !StrobeMetrics
/// Present only with the package trait `StrobeMetrics`.
///
/// The bridge to swift-metrics is built only when the app enables the trait,
/// so that apps without it never resolve swift-metrics:
///
/// ```swift
/// .package(url: "<strobe repository>", from: "<version>", traits: ["StrobeMetrics"])
/// ```
@available(
    *, unavailable,
    message:
        "StrobeMetrics needs the package trait \"StrobeMetrics\": add traits: [\"StrobeMetrics\"] to the strobe package dependency"
)
public struct StrobeMetricsFactory {}
#endif
