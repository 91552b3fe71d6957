import Foundation

/// The chi-squared distribution, for the bounds of a spread estimated from
/// few degrees of freedom.
package enum ChiSquaredDistribution {
    /// The `probability` quantile with `degreesOfFreedom`, by Wilson and
    /// Hilferty's cube-root normal approximation (within about 2% of the
    /// exact lower quantiles from 2 degrees of freedom on).
    package static func quantile(_ probability: Double, degreesOfFreedom: Double) -> Double {
        let k = degreesOfFreedom
        let term = 2 / (9 * k)
        let root = 1 - term + NormalDistribution.quantile(probability) * term.squareRoot()
        return max(k * root * root * root, 1e-9)
    }
}
