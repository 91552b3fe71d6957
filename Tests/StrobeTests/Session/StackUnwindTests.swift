import CStrobe
import Testing

@testable import StrobeEncoding

#if canImport(Glibc)
import Glibc
#endif

/// The call-frame information's interpreter on a hand-built FDE, and the
/// unwinder on hand-built stacks.
extension RecordingTests {
    @Suite struct StackUnwindTests {
        /// A CIE (`zR`, pointers as 8-byte values, data alignment -8, return
        /// address column 16, CFA = rsp + 8 and the return address at
        /// CFA - 8) and an FDE for 0x1000..<0x1100: `push rbp` at 0x1000,
        /// `mov rbp, rsp` at 0x1001 (3 bytes), an epilogue at 0x1024 inside
        /// remember/restore state.
        static let section: [UInt8] = {
            var cie: [UInt8] = [0, 0, 0, 0, 1, UInt8(ascii: "z"), UInt8(ascii: "R"), 0, 1, 0x78, 16, 1, 0x04]
            cie += [0x0c, 7, 8, 0x90, 1]
            while (cie.count + 4) % 8 != 0 { cie.append(0) }
            var fde: [UInt8] = []
            func append64(_ value: UInt64) {
                for shift in stride(from: 0, to: 64, by: 8) {
                    fde.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
                }
            }
            append64(0x1000)
            append64(0x100)
            fde.append(0)
            fde += [0x41, 0x0e, 16, 0x86, 2] // advance 1; CFA offset 16; rbp at CFA-16
            fde += [0x43, 0x0d, 6] // advance 3; CFA register rbp
            fde += [0x02, 0x20, 0x0a, 0x0c, 7, 8] // advance 0x20; remember; CFA = rsp + 8
            fde += [0x41, 0x0b] // advance 1; restore
            while (fde.count + 8) % 8 != 0 { fde.append(0) }
            func length(_ count: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: count >> ($0 * 8)) } }
            let cieEntry = length(cie.count) + cie
            // The CIE pointer: from the field back to the CIE's start.
            let fdeEntry = length(fde.count + 4) + length(cieEntry.count + 4) + fde
            return cieEntry + fdeEntry + [0, 0, 0, 0]
        }()

        static func rule(at address: UInt64) -> cstrobe_cfa_rule? {
            let cieLength = Int(section[0]) + 4
            return section.withUnsafeBufferPointer { bytes in
                var rule = cstrobe_cfa_rule()
                return cstrobe_cfa_rule_from_fde(bytes.baseAddress! + cieLength, address, &rule) != 0 ? rule : nil
            }
        }

        @Test func theCFAProgramRunsUpToTheAddress() throws {
            let entry = try #require(Self.rule(at: 0x1000))
            #expect(entry.cfa_register == 7 && entry.cfa_offset == 8)
            #expect(entry.return_address == CSTROBE_SAVED_AT_CFA && entry.return_address_offset == -8)
            #expect(entry.frame_pointer == CSTROBE_SAVED_UNCHANGED)
            #expect(entry.function_start == 0x1000 && entry.function_end == 0x1100)
            let pushed = try #require(Self.rule(at: 0x1003))
            #expect(pushed.cfa_register == 7 && pushed.cfa_offset == 16)
            #expect(pushed.frame_pointer == CSTROBE_SAVED_AT_CFA && pushed.frame_pointer_offset == -16)
            let body = try #require(Self.rule(at: 0x1010))
            #expect(body.cfa_register == 6 && body.cfa_offset == 16)
            let epilogue = try #require(Self.rule(at: 0x1024))
            #expect(epilogue.cfa_register == 7 && epilogue.cfa_offset == 8)
            let restored = try #require(Self.rule(at: 0x1025))
            #expect(restored.cfa_register == 6 && restored.cfa_offset == 16)
            #expect(Self.rule(at: 0x1100) == nil)
            #expect(Self.rule(at: 0xfff) == nil)
        }

        @Test func theRuleOfCodeInThisProcessIsFound() throws {
            #if os(Linux) && arch(x86_64)
            // libc's `getpid`, or whatever the dynamic symbol names.
            let function = try #require(dlsym(dlopen(nil, RTLD_NOW), "getpid"))
            var rule = cstrobe_cfa_rule()
            let address = UInt64(UInt(bitPattern: function))
            #expect(cstrobe_cfa_rule_at(address, &rule) == 1)
            #expect(rule.function_start <= address && address < rule.function_end)
            #expect(rule.cfa_register == 7 && rule.cfa_offset == 8)
            #expect(cstrobe_cfa_rule_at(0x10, &rule) == 0)
            #endif
        }

        static func frameless(_ offset: Int64, _ returnAddress: UnwindRule.Saved = .atCFA(-8)) -> UnwindRule {
            UnwindRule(base: .stackPointer, offset: offset, returnAddress: returnAddress, framePointer: .unchanged)
        }

        static let framePointerRule = UnwindRule(
            base: .framePointer, offset: 16, returnAddress: .atCFA(-8), framePointer: .atCFA(-16))

        @Test func aFramelessLeafsCallerIsUnwound() {
            // The leaf (0x9000) keeps no frame: the walk from the frame
            // pointer found its caller's caller (0x7000) and on (0x6000);
            // the return into its caller (0x5000) is at CFA - 8 = sp + 8.
            let chain: [UInt64] = [0x9000, 0x7000, 0x6000]
            let stack: [UInt64] = [0x1234, 0x5000, 0x99]
            let rules: [UInt64: UnwindRule] = [
                0x9000: Self.frameless(16),
                0x4fff: Self.framePointerRule,
            ]
            let unwound = StackUnwinder.unwind(
                chain: chain, stackPointer: 0x10000, framePointer: 0x20000, stack: stack
            ) { rules[$0] }
            #expect(unwound == .init(frames: [0x9000, 0x5000, 0x7000, 0x6000], truncated: false))
            // A leaf with its frame: the walk is kept as it is.
            let framed = StackUnwinder.unwind(
                chain: chain, stackPointer: 0x10000, framePointer: 0x20000, stack: stack
            ) { _ in Self.framePointerRule }
            #expect(framed == .init(frames: chain, truncated: false))
            // No rule for the leaf, or its return address beyond the copied
            // stack: the stack ends at the leaf, truncated, never guessed.
            let unknown = StackUnwinder.unwind(
                chain: chain, stackPointer: 0x10000, framePointer: 0x20000, stack: stack
            ) { _ in nil }
            #expect(unknown == .init(frames: [0x9000], truncated: true))
            let deep = Self.frameless(1024)
            let beyond = StackUnwinder.unwind(
                chain: chain, stackPointer: 0x10000, framePointer: 0x20000, stack: stack
            ) { _ in deep }
            #expect(beyond == .init(frames: [0x9000], truncated: true))
            // Two frameless frames, the second's caller outermost.
            let outer: [UInt64: UnwindRule] = [
                0x9000: Self.frameless(16),
                0x4fff: Self.frameless(8),
                0x98ff: Self.frameless(8, .undefined),
            ]
            let two = StackUnwinder.unwind(
                chain: chain, stackPointer: 0x10000, framePointer: 0x20000, stack: [0x1234, 0x5000, 0x9900]
            ) { outer[$0] }
            #expect(two == .init(frames: [0x9000, 0x5000, 0x9900], truncated: false))
            // A leaf at its `ret`, after `pop rbp`: the CFA is sp + 8 and
            // the rule still puts the frame pointer at CFA − 16, below the
            // stack pointer; the register is its caller's again, so the
            // caller's frame is the one the walk started from.
            let epilogue: [UInt64: UnwindRule] = [
                0x9000: UnwindRule(
                    base: .stackPointer, offset: 8, returnAddress: .atCFA(-8), framePointer: .atCFA(-16)),
                0x4fff: Self.framePointerRule,
            ]
            let returning = StackUnwinder.unwind(
                chain: chain, stackPointer: 0x10000, framePointer: 0x20000, stack: [0x5000, 0x99]
            ) { epilogue[$0] }
            #expect(returning == .init(frames: [0x9000, 0x5000, 0x7000, 0x6000], truncated: false))
        }
    }
}
