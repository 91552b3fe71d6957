import StrobeProcessRunner
import StrobeResults

/// One way of counting the user-space instructions of measure blocks: the
/// CPU's hardware counter (``HardwareCounterEngine``), Valgrind's callgrind
/// (``CallgrindEngine``) or QEMU's user-mode emulator with Strobe's plugin
/// (``QEMUPluginEngine``), a file each.
///
/// An engine says what it is in ``facts`` (what the `strobe` command weighs
/// too: the mode that asks for it, the tool it needs, whether it runs the
/// suite again under that tool, what it counts) and why it cannot count on a
/// machine (``problem(environment:)``). An engine that relaunches runs the
/// suite again under its tool (``launch(arguments:environment:)``) unless
/// this process already runs under it (``runsUnderTool(environment:)``).
/// In the process that counts, ``attach(mode:environment:)`` gives the
/// engine, which counts windows: ``begin(excluding:)``, then
/// ``end(label:)``, or ``abandon()`` when the block threw.
///
/// A new engine is a type conforming to this in a file of its own, listed in
/// ``InstructionCounter/engines``, with its ``CountingEngine`` beside the
/// others and its mode a case of ``InstructionCounting``.
protocol InstructionEngine: AnyObject {
    /// What the engine is, as the chooser and `strobe compare` see it: its
    /// mode, what it runs the suite under, what it counts.
    static var facts: CountingEngine { get }

    /// Why the engine cannot count on this machine (its tool, or what
    /// builds a part of it, missing; a build without what steers it), or nil
    /// when it can.
    static func problem(environment: [String: String]) -> String?

    /// Whether this process already runs under the engine's tool, so that
    /// it is not launched under it again; false for an engine that counts in
    /// place.
    static func runsUnderTool(environment: [String: String]) -> Bool

    /// Runs the suite with `arguments` again as a child process under the
    /// engine's tool, waits for it and returns its exit status; nil for an
    /// engine that counts in the suite's own process, which launches
    /// nothing. Throws when the child cannot be started.
    static func launch(arguments: [String], environment: [String: String]) throws -> Int32?

    /// The engine counting in this process: for one that relaunches, where
    /// this process is the child its launch started, whatever `mode`; for
    /// one that counts in place, where `mode` asks for it and the machine
    /// has it.
    static func attach(mode: InstructionCounting, environment: [String: String]) -> InstructionEngineAttachment

    /// Starts a window: counts from here, on every thread but `writer` (the
    /// session's writer thread, by its kernel id) where the engine can leave
    /// a thread out.
    func begin(excluding writer: Int32?)

    /// Ends the window and reads what it counted. `label` (a C string, made
    /// before the window opened) names the window where the engine keeps a
    /// file of it.
    func end(label: [CChar]) throws -> InstructionReading

    /// Closes a window whose block threw, without reading it, so that the
    /// next window counts only its own.
    func abandon()
}

extension InstructionEngine {
    /// What the engine is (``InstructionEngine/facts``).
    var facts: CountingEngine { Self.facts }

    /// Whether the process runs under the engine's tool (a simulation or an
    /// emulation), whose times say nothing of the code's speed: only counts
    /// are kept.
    var countsOnly: Bool { Self.facts.tool != nil }
}

/// Whether an engine counts in this process (``InstructionEngine/attach(mode:environment:)``).
enum InstructionEngineAttachment {
    /// It does: the engine, ready for windows.
    case counting(any InstructionEngine)
    /// It was asked for, or this process runs under its tool, but it cannot
    /// count: why.
    case cannotCount(String)
    /// It does not count here.
    case notHere
}

/// What one window counted.
struct InstructionReading {
    /// Every instruction of the block.
    var instructions: UInt64
    /// Per function, from an engine that counts them.
    var profile: InstructionProfile?
}
