import Foundation
import StrobeProcessRunner

/// Finds the ``InstructionEngine`` that counts the user-space instructions
/// of this process's measure blocks: the one whose tool this process runs
/// under (callgrind's or QEMU's child, whatever the mode), else the one the
/// mode asks for that counts in place (the hardware counter).
enum InstructionCounter {
    /// Every engine, in the order they are asked: those that relaunch the
    /// suite first, then the one that counts in place.
    static var engines: [any InstructionEngine.Type] {
        [CallgrindEngine.self, QEMUPluginEngine.self, HardwareCounterEngine.self]
    }

    /// The engine `mode` asks for, nil for `.auto` and `.off`.
    static func engine(for mode: InstructionCounting) -> (any InstructionEngine.Type)? {
        engines.first { $0.facts.mode == mode }
    }

    /// The engine counting in this process for `mode`, or nil and why
    /// there is none (nil and no reason when none was asked for: `off`, or
    /// `auto` on a machine without a hardware counter).
    static func make(
        _ mode: InstructionCounting, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> (engine: (any InstructionEngine)?, note: String?) {
        for engine in engines {
            switch engine.attach(mode: mode, environment: environment) {
            case .counting(let counting): return (counting, nil)
            case .cannotCount(let note): return (nil, note)
            case .notHere: continue
            }
        }
        if mode.engine?.tool != nil {
            return (
                nil,
                "instructions are counted only in the \(mode.rawValue) process --instructions \(mode.rawValue) starts"
            )
        }
        return (nil, nil)
    }
}

/// Instructions could not be counted: what went wrong.
struct InstructionCountError: Error, CustomStringConvertible {
    /// What went wrong.
    var problem: String

    var description: String { "instructions: \(problem)" }
}
