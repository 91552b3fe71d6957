import Foundation
import StrobeResults
import StrobeStatistics
import Testing

@testable import StrobeJudgement

/// A direction is `"better": "lower" | "higher"` in every JSON form, and a
/// form without it is refused: no other key is read in its place.
struct DirectionJSONTests {
    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test(arguments: MetricDirection.allCases)
    func aComparisonRoundTripsWithItsDirection(better: MetricDirection) throws {
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
        #expect(try JSONDecoder().decode(MetricComparison.self, from: Data(json.utf8)) == comparison)
        // Without the key the comparison is refused: no other key is read
        // in its place.
        let without = json.replacing(#""better":"\#(better.rawValue)","#, with: #""lowerIsBetter":false,"#)
        #expect(!without.contains(#""better""#))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(MetricComparison.self, from: Data(without.utf8))
        }
    }

    @Test func aHistoryIsWrittenAndReadWithBetter() throws {
        let history = MetricHistory(name: "fps", values: [60, 59, 52], better: .higher, relativeFloor: 0.02)
        let json = try Self.encode(history)
        #expect(json == #"{"better":"higher","name":"fps","relativeFloor":0.02,"values":[60,59,52]}"#)
        #expect(try JSONDecoder().decode(MetricHistory.self, from: Data(json.utf8)) == history)
    }

    @Test func withoutTheKeyOrWithAnotherValueADirectionIsRefused() throws {
        let neither = #"{"name":"fps","values":[60],"lowerIsBetter":false,"relativeFloor":0}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(MetricHistory.self, from: Data(neither.utf8)) }
        let metric = #"{"name":"fps","unit":"count/s","samples":[60]}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PerfMetric.self, from: Data(metric.utf8)) }
        let wrong = #"{"name":"fps","values":[60],"better":"sideways","relativeFloor":0}"#
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(MetricHistory.self, from: Data(wrong.utf8))
        }
    }
}
