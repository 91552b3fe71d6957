import Foundation
import StrobeResults
import StrobeStatistics
import Testing

@testable import StrobeJudgement

/// JSON written before directions were `"better": "lower" | "higher"` held
/// the flag `"lowerIsBetter"`: it still decodes, and only `better` is written.
struct OlderJSONTests {
    /// `json` as an older version wrote it: each `"better"` as the flag.
    static func older(_ json: String) -> String {
        json.replacing(#/"better"\s*:\s*"lower"/#, with: #""lowerIsBetter":true"#)
            .replacing(#/"better"\s*:\s*"higher"/#, with: #""lowerIsBetter":false"#)
    }

    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test(arguments: MetricDirection.allCases)
    func aComparisonWithTheOlderFlagDecodesToTheSameComparison(better: MetricDirection) throws {
        let comparison = ComparisonEngine.compare([
            .init(
                name: "fps", unit: "count/s", better: better,
                baseline: (0..<5).map { index in
                    Replicate(id: "b\(index)", samples: [60, 61, 59.5].map { $0 + Double(index) })
                },
                candidate: (0..<5).map { index in
                    Replicate(id: "c\(index)", samples: [52, 53, 51.5].map { $0 + Double(index) })
                })
        ])[0]
        #expect(comparison.better == better)
        let json = try Self.encode(comparison)
        #expect(json.contains(#""better":"\#(better.rawValue)""#))
        #expect(!json.contains("lowerIsBetter"))
        let older = Self.older(json)
        #expect(older.contains(#""lowerIsBetter":\#(better == .lower)"#) && !older.contains(#""better""#))
        let decoded = try JSONDecoder().decode(MetricComparison.self, from: Data(older.utf8))
        #expect(decoded == comparison)
        #expect(try JSONDecoder().decode(MetricComparison.self, from: Data(json.utf8)) == comparison)
    }

    @Test func aHistoryWithTheOlderFlagDecodesAndIsWrittenWithBetter() throws {
        let older = #"{"name":"fps","values":[60,59,52],"lowerIsBetter":false,"relativeFloor":0.02}"#
        let history = try JSONDecoder().decode(MetricHistory.self, from: Data(older.utf8))
        #expect(history == MetricHistory(name: "fps", values: [60, 59, 52], better: .higher, relativeFloor: 0.02))
        let json = try Self.encode(history)
        #expect(json == #"{"better":"higher","name":"fps","relativeFloor":0.02,"values":[60,59,52]}"#)
        #expect(Self.older(json).contains(#""lowerIsBetter":false"#))
    }

    @Test func aHistoryWithNeitherKeyIsLowerIsBetterAsAResultsFileIs() throws {
        let neither = #"{"name":"fps","values":[60],"relativeFloor":0}"#
        #expect(try JSONDecoder().decode(MetricHistory.self, from: Data(neither.utf8)).better == .lower)
        let metric = #"{"name":"fps","unit":"count/s","samples":[60]}"#
        #expect(try JSONDecoder().decode(PerfMetric.self, from: Data(metric.utf8)).better == .lower)
        let wrong = #"{"name":"fps","values":[60],"better":"sideways","relativeFloor":0}"#
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(MetricHistory.self, from: Data(wrong.utf8))
        }
    }
}
