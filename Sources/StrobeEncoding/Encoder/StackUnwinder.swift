/// What a function's call-frame information says at one address: how to
/// find the frame of its caller (DWARF's CFA rule and the rules of the
/// return address and the frame pointer), as `cstrobe_cfa_rule_at` reads it.
package struct UnwindRule: Hashable, Sendable {
    /// Where a register of the caller is kept.
    package enum Saved: Hashable, Sendable {
        /// Not saved: the caller's value is the callee's.
        case unchanged
        /// In memory at the CFA plus this offset.
        case atCFA(Int64)
        /// No value: for the return address, the outermost frame.
        case undefined
    }

    /// The register the CFA is an offset from.
    package enum Base: Hashable, Sendable {
        case stackPointer
        case framePointer
    }

    package var base: Base
    package var offset: Int64
    package var returnAddress: Saved
    package var framePointer: Saved

    package init(base: Base, offset: Int64, returnAddress: Saved, framePointer: Saved) {
        self.base = base
        self.offset = offset
        self.returnAddress = returnAddress
        self.framePointer = framePointer
    }
}

/// Unwinds a sample's stack by the call-frame information of the code it
/// passes through, where the frame-pointer walk alone would skip a caller.
///
/// A function that keeps no frame pointer (a leaf of libm, or any function
/// in its prologue or epilogue) leaves the frame pointer as its caller set
/// it, so a walk from it finds the caller's caller. Each frame here is
/// instead unwound by its rule: the CFA from the stack or frame pointer,
/// the return address read at its offset from the CFA in the stack words
/// copied with the sample. Once a frame's CFA is its frame pointer and that
/// pointer is the one the sampler walked from, the walk's return addresses
/// are that frame's callers, and the stack continues with them.
package enum StackUnwinder {
    /// The most frames unwound by their rule before the walk takes over.
    package static let maximumRuleFrames = 16

    /// The unwound frames, innermost first, and whether the stack ends
    /// where a frame could not be unwound (no rule, a rule this reader does
    /// not follow, or a saved value beyond the copied stack).
    package struct Result: Equatable, Sendable {
        package var frames: [UInt64]
        package var truncated: Bool
    }

    /// Unwinds from `chain` (the interrupted program counter, then the
    /// return addresses a frame-pointer walk from `framePointer` found),
    /// with the stack pointer and the `stack` words at it; `rule` gives the
    /// rule at an address (for a caller, an address inside its call
    /// instruction), nil where there is none.
    package static func unwind(
        chain: [UInt64], stackPointer: UInt64, framePointer: UInt64, stack: some RandomAccessCollection<UInt64>,
        rule: (UInt64) -> UnwindRule?
    ) -> Result {
        guard let first = chain.first else { return Result(frames: [], truncated: true) }
        func read(_ address: UInt64) -> UInt64? {
            guard address >= stackPointer, address & 7 == 0 else { return nil }
            let index = (address - stackPointer) / 8
            guard index < UInt64(stack.count) else { return nil }
            return stack[stack.index(stack.startIndex, offsetBy: Int(index))]
        }
        var frames = [first]
        var pc = first
        var sp = stackPointer
        var fp = framePointer
        for depth in 0..<maximumRuleFrames {
            guard let rule = rule(depth == 0 ? pc : pc &- 1) else { return Result(frames: frames, truncated: true) }
            if rule.base == .framePointer, fp == framePointer, rule.offset == 16, rule.returnAddress == .atCFA(-8) {
                // The frame record the walk started from: its callers are
                // the walk's.
                return Result(frames: frames + chain.dropFirst(), truncated: false)
            }
            let cfa = (rule.base == .stackPointer ? sp : fp) &+ UInt64(bitPattern: rule.offset)
            let returnAddress: UInt64
            switch rule.returnAddress {
            case .undefined: return Result(frames: frames, truncated: false)
            case .unchanged: return Result(frames: frames, truncated: true)
            case .atCFA(let offset):
                guard let value = read(cfa &+ UInt64(bitPattern: offset)) else {
                    return Result(frames: frames, truncated: true)
                }
                returnAddress = value
            }
            switch rule.framePointer {
            case .unchanged: break
            case .undefined: return Result(frames: frames, truncated: true)
            case .atCFA(let offset):
                let slot = cfa &+ UInt64(bitPattern: offset)
                // A slot below the stack pointer was popped already: at an
                // epilogue's `ret`, after `pop rbp`, the rule still names the
                // slot (compilers restore only the CFA there), and the
                // register holds the caller's value.
                if depth == 0, slot < stackPointer { break }
                guard let value = read(slot) else {
                    return Result(frames: frames, truncated: true)
                }
                fp = value
            }
            // The outermost frame's return address is 0 on some stacks.
            if returnAddress < 4096 { return Result(frames: frames, truncated: false) }
            frames.append(returnAddress)
            pc = returnAddress
            sp = cfa
        }
        return Result(frames: frames, truncated: true)
    }
}
