import StrobeResults

extension MetricDirection {
    /// The keys a direction is stored under in JSON: `better` (`"lower"` or
    /// `"higher"`), or in JSON written before it the `lowerIsBetter` flag.
    package enum StoredKey: String, CodingKey {
        /// `"better": "lower"` or `"better": "higher"`.
        case better
        /// `"lowerIsBetter": true` or `false`, as older versions wrote it.
        case lowerIsBetter
    }

    /// Reads the direction of the object `decoder` is at: its `better` value
    /// or, from older JSON, its `lowerIsBetter` flag; lower when neither is
    /// there, as a results file's metric reads (``PerfMetric``).
    ///
    /// - Throws: a type mismatch when either key holds something else.
    package init(decodingEitherKeyFrom decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StoredKey.self)
        if let better = try container.decodeIfPresent(MetricDirection.self, forKey: .better) {
            self = better
        } else {
            let lower = try container.decodeIfPresent(Bool.self, forKey: .lowerIsBetter) ?? true
            self = lower ? .lower : .higher
        }
    }
}
