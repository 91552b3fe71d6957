import Foundation

/// Student's t distribution.
public enum StudentDistribution {
    /// P(T > t) for `degreesOfFreedom`, through the regularized incomplete
    /// beta function: P(|T| > t) = I_{ν/(ν+t²)}(ν/2, 1/2).
    public static func survival(_ t: Double, degreesOfFreedom: Double) -> Double {
        guard degreesOfFreedom > 0, t.isFinite else { return t > 0 ? 0 : 1 }
        let x = degreesOfFreedom / (degreesOfFreedom + t * t)
        let twoSided = IncompleteBeta.regularized(x, degreesOfFreedom / 2, 0.5)
        return t > 0 ? twoSided / 2 : 1 - twoSided / 2
    }
}

/// The regularized incomplete beta function I_x(a, b).
enum IncompleteBeta {
    static func regularized(_ x: Double, _ a: Double, _ b: Double) -> Double {
        guard x > 0 else { return 0 }
        guard x < 1 else { return 1 }
        let logBeta: Double = lgamma(a + b) - lgamma(a) - lgamma(b)
        let logFront: Double = logBeta + a * log(x) + b * log(1 - x)
        let front = exp(logFront)
        // The continued fraction converges fast for x below the mean.
        if x < (a + 1) / (a + b + 2) {
            return front * continuedFraction(x, a, b) / a
        }
        return 1 - front * continuedFraction(1 - x, b, a) / b
    }

    /// Lentz's evaluation of the continued fraction for I_x(a, b).
    private static func continuedFraction(_ x: Double, _ a: Double, _ b: Double) -> Double {
        let tiny = 1e-300
        var c = 1.0
        var d = 1 - (a + b) * x / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var result = d
        for m in 1...300 {
            let m = Double(m)
            let even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
            d = 1 + even * d
            if abs(d) < tiny { d = tiny }
            c = 1 + even / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            result *= d * c
            let odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
            d = 1 + odd * d
            if abs(d) < tiny { d = tiny }
            c = 1 + odd / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let step = d * c
            result *= step
            if abs(step - 1) < 1e-14 { break }
        }
        return result
    }
}

extension StudentDistribution {
    /// The `probability` quantile of Student's t with `degreesOfFreedom`:
    /// the t with P(T ≤ t) = probability, found by bisection on
    /// ``survival(_:degreesOfFreedom:)`` to a relative precision of 1e-10.
    public static func quantile(_ probability: Double, degreesOfFreedom: Double) -> Double {
        guard probability > 0 else { return -.infinity }
        guard probability < 1 else { return .infinity }
        if probability < 0.5 { return -quantile(1 - probability, degreesOfFreedom: degreesOfFreedom) }
        let tail = 1 - probability
        var low = 0.0
        var high = 1.0
        while survival(high, degreesOfFreedom: degreesOfFreedom) > tail, high < 1e12 { high *= 2 }
        for _ in 0..<200 {
            let middle = (low + high) / 2
            if survival(middle, degreesOfFreedom: degreesOfFreedom) > tail { low = middle } else { high = middle }
            if high - low <= 1e-10 * high { break }
        }
        return (low + high) / 2
    }
}
