import Foundation
import ProfileWorkload
import StrobeTestSupport
import Testing

@testable import Strobe

extension RecordingTests {
    @Suite struct CPUProfileTests {
        @Test func smoke() throws {
            let path = "/tmp/ptest/smoke.pftrace"
            var configuration = TraceConfiguration(outputPath: path)
            configuration.cpuProfile = .init(frequency: 999)
            let session = try TraceSession.start(configuration)
            ProfileWorkload.run(threads: 2, milliseconds: 300)
            try session.stop()
            print("STATS", session.statistics)
        }
    }
}
