import CStrobe
import Foundation
import ProfileWorkload
import StrobeReader
import StrobeTestSupport
import Testing

@testable import Strobe
@testable import StrobeEncoding

#if canImport(Glibc)
import Glibc
#endif

/// Names for code with no full symbol table (a stripped libm, the vDSO), and
/// the callers of a leaf that keeps no frame pointer.
extension RecordingTests {
    @Suite struct CPUProfileNamingTests {
        static func address(_ symbol: String, in library: String) -> UInt64? {
            guard let handle = dlopen(library, RTLD_LAZY | RTLD_NOLOAD) else { return nil }
            defer { dlclose(handle) }
            return dlsym(handle, symbol).map { UInt64(UInt(bitPattern: $0)) }
        }

        @Test func strippedLibrariesAndTheVDSOAreNamedByFunction() throws {
            #if os(Linux) && arch(x86_64)
            // Loads libm if the test binary did not.
            _ = sin(Double(getpid()))
            let sine = try #require(Self.address("sin", in: "libm.so.6"))
            let named = ProcessSymbols.shared.withLock { symbols in
                [sine, sine + 16, sine + 40].map { symbols.resolve($0) }
            }
            #expect(named.map(\.function) == ["sin", "sin", "sin"])
            #expect(Set(named.map(\.relativePC)).count == 1)
            #expect(named[0].mapping?.path.contains("libm") == true)
            #expect(named[0].mapping?.buildID.count == 40)
            let clock = try #require(Self.address("__vdso_clock_gettime", in: "linux-vdso.so.1"))
            let vdso = ProcessSymbols.shared.withLock { $0.resolve(clock + 4) }
            #expect(vdso.function == "clock_gettime")
            #expect(vdso.mapping?.path == "[vdso]")
            #endif
        }

        /// Nearly every sample inside libm is under the function that called
        /// it, and no stack repeats a function that did not recurse.
        @Test(
            .enabled(if: OfficialDecoder.isUsable),
            arguments: [TraceConfiguration.CPUProfile.Method.automatic, .cpuTimer])
        func aLibmLeafIsUnderItsCaller(method: TraceConfiguration.CPUProfile.Method) throws {
            #if os(Linux) && arch(x86_64)
            let path = temporaryTracePath("libm-\(method)")
            defer { try? FileManager.default.removeItem(atPath: path) }
            var configuration = TraceConfiguration(outputPath: path)
            configuration.cpuProfile = .init(frequency: 999, method: method)
            let session = try TraceSession.start(configuration)
            ProfileWorkload.runLibmLeaf(threads: 2, milliseconds: 1000)
            try session.stop()
            let profile = try CPUProfile.read(contentsOf: path)
            let inLibm = profile.samples.filter { sample in
                profile.stacks[sample.stack].last.map { profile.functions[$0] == "sin" } ?? false
            }
            let underCaller = inLibm.filter { sample in
                let stack = profile.stacks[sample.stack]
                return stack.count >= 2 && profile.functions[stack[stack.count - 2]] == ProfileWorkload.libmCaller
            }
            print(
                "libm (\(method)): \(underCaller.count) of \(inLibm.count) under their caller;"
                    + " truncated \(profile.truncatedStacks ?? -1) of \(profile.samples.count)")
            // The CPU-time timer samples the whole process, so suites that
            // run beside this one take a share of its samples. Under
            // ThreadSanitizer the instrumented caller takes most of the
            // time: about a quarter of the native count lands in sin (300
            // against 1,200).
            let fewest = method == .cpuTimer ? 20 : ProcessMemory.isThreadSanitized ? 100 : 500
            #expect(inLibm.count > fewest)
            #expect(Double(underCaller.count) >= 0.95 * Double(inLibm.count))
            // A function of one mapping appears once per stack (libc's
            // `clock_gettime` calling the vDSO's is two functions).
            let official = try OfficialProfile.decode(path)
            for sample in official.samples
            where sample.frames.contains(where: {
                $0.function == ProfileWorkload.libmCaller
            }) {
                let frames = sample.frames.map { "\($0.function ?? "") in \($0.mapping_path ?? "")" }
                #expect(Set(frames).count == frames.count, "\(frames)")
            }
            #expect(!profile.functions.contains { $0.hasPrefix("libm.so.6+") })
            #endif
        }
    }
}
