/// The rarely used parts of an interval, boxed so intervals stay small.
@usableFromInline
final class IntervalDetails: Sendable, Hashable {
    struct Values: Hashable {
        var resourceUsage: ResourceUsageDelta?
        var arguments: [String: TraceArgument] = [:]
        var flowIDs: [UInt64] = []
        var terminatingFlowIDs: [UInt64] = []
        var categories: [String] = []

        var isEmpty: Bool {
            resourceUsage == nil && arguments.isEmpty && flowIDs.isEmpty && terminatingFlowIDs.isEmpty
                && categories.isEmpty
        }
    }

    let values: Values

    init(_ values: Values) { self.values = values }

    convenience init(
        resourceUsage: ResourceUsageDelta?, arguments: [String: TraceArgument], flowIDs: [UInt64],
        terminatingFlowIDs: [UInt64]
    ) {
        self.init(
            Values(
                resourceUsage: resourceUsage, arguments: arguments, flowIDs: flowIDs,
                terminatingFlowIDs: terminatingFlowIDs))
    }

    var resourceUsage: ResourceUsageDelta? { values.resourceUsage }
    var arguments: [String: TraceArgument] { values.arguments }
    var flowIDs: [UInt64] { values.flowIDs }
    var terminatingFlowIDs: [UInt64] { values.terminatingFlowIDs }
    var categories: [String] { values.categories }

    @usableFromInline static func == (lhs: IntervalDetails, rhs: IntervalDetails) -> Bool { lhs.values == rhs.values }
    @usableFromInline func hash(into hasher: inout Hasher) { hasher.combine(values) }
}
