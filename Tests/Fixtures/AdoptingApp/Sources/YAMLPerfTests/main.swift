// A perf test of YAML decoding, as an app that pins Yams 5 writes it.
//
//   swift run -c release YAMLPerfTests --iterations 5

import Foundation
import Strobe
import StrobePerf
import Yams

/// One record of the document the test decodes.
struct Release: Codable, Sendable {
    var name: String
    var version: String
    var downloads: Int
    var tags: [String]
}

/// A YAML document of `count` releases, made in memory.
func releasesDocument(count: Int) -> String {
    (0..<count).map { index in
        """
        - name: package-\(index)
          version: \(index / 100).\(index / 10 % 10).\(index % 10)
          downloads: \(index * 37)
          tags: [swift, yaml, "tag \(index % 7)"]
        """
    }.joined(separator: "\n")
}

let document = releasesDocument(count: 400)

let decode = PerfTest("decode releases", metrics: [.interval("decode", .sum)]) { _ in
    let releases = try Trace.interval("decode") { try YAMLDecoder().decode([Release].self, from: document) }
    precondition(releases.count == 400)
}

await PerfSuite("YAMLPerfTests", tests: [decode]).main()
