// Perf tests of YAML decoding, encoding and untyped loading, as an app that
// pins Yams 5 writes them. The document (about 330 KB) is made once per
// process, outside the measured blocks.
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

let releaseCount = 3_000
let document = releasesDocument(count: releaseCount)
let releases = try YAMLDecoder().decode([Release].self, from: document)

let decode = PerfTest("decode") { _ in
    let decoded = try YAMLDecoder().decode([Release].self, from: document)
    precondition(decoded.count == releaseCount)
}

let encode = PerfTest("encode") { _ in
    let encoded = try YAMLEncoder().encode(releases)
    precondition(encoded.count > document.count / 2)
}

let load = PerfTest("load") { _ in
    let loaded = try Yams.load(yaml: document) as? [Any]
    precondition(loaded?.count == releaseCount)
}

await PerfSuite("YAMLPerfTests", tests: [decode, encode, load]).main()
