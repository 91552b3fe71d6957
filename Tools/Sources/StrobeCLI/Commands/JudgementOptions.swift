import ArgumentParser
import StrobeJudgement

/// `--alpha` and `--min-effect`, the two numbers every judging command
/// (`compare`, `diff`, `fleet`, `trend`) takes: the false-alarm rate and
/// the noise floor. Each is nil when not given, so a policy's value, or the
/// command's default, stands.
struct JudgementOptions: ParsableArguments {
    @Option(
        help: """
            False-alarm rate (false discovery rate) across the metrics compared, over all looks \
            (default: 0.01, or the policy's where one is given).
            """)
    var alpha: Double?

    @Option(
        name: .customLong("min-effect"),
        help: "Noise floor in percent: smaller changes never count (default: 2, or the policy's where one is given).")
    var minEffect: Double?

    /// The first problem with the two, if any.
    var problem: String? {
        if let alpha, !(alpha > 0 && alpha < 1) { return "--alpha must be between 0 and 1, not \(alpha)" }
        if let minEffect, !(minEffect >= 0 && minEffect < 100) {
            return "--min-effect is a percentage from 0 to 100, not \(minEffect)"
        }
        return nil
    }

    func validate() throws {
        if let problem { throw ValidationError(problem) }
    }

    /// `options` with the policy's alpha and floor, overridden by these
    /// flags where given.
    func resolved(_ options: ComparisonOptions = ComparisonOptions(), policy: ComparisonPolicy) -> ComparisonOptions {
        policy.options(overriding: options, alpha: alpha, minimumEffect: minEffect.map { $0 / 100 })
    }
}
