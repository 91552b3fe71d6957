import Strobe
import StrobeResults

/// One dump of callgrind's counts (its file format, version 1): the
/// instructions of a measure block in all, and per function.
///
/// The format names a function on an `fn=` line (compressed as `fn=(7)
/// name` the first time and `fn=(7)` after), its cost lines (a position
/// and the count of each event) give its own instructions, and a call is a
/// `cfn=` line, a `calls=` line and a cost line that is the call's
/// inclusive cost. Only the `Ir` event (instructions executed) is read.
struct CallgrindDump {
    /// The dump's functions, with their own and inclusive instructions and
    /// the calls between them; `iterations` is 1.
    var profile: InstructionProfile

    /// The instructions of the whole dump.
    var total: UInt64 { profile.total }

    /// Reads `text`, a dump file's contents; `source` names it in errors.
    init(parsing text: String, source: String) throws(CallgrindDumpError) {
        var names: [String: String] = [:] // "(7)" -> name, per kind
        var functionIndex: [String: Int] = [:]
        var functions: [String] = []
        var exclusive: [UInt64] = []
        var callCost: [Int: [Int: UInt64]] = [:]
        var eventColumn: Int?
        var positionCount = 1
        var total: UInt64?
        var current: Int?
        var callee: Int?
        var pendingCall = false
        var summary: UInt64?

        func resolve(_ value: Substring, kind: String) -> String {
            // "(id) name", "(id)" or "name".
            guard value.hasPrefix("("), let close = value.firstIndex(of: ")") else {
                return String(value)
            }
            let key = kind + value[...close]
            let rest = value[value.index(after: close)...].drop { $0 == " " }
            if !rest.isEmpty { names[key] = String(rest) }
            return names[key] ?? String(value)
        }
        func index(of mangled: String) -> Int {
            let name = CallgrindDump.readableName(mangled)
            if let existing = functionIndex[name] { return existing }
            functionIndex[name] = functions.count
            functions.append(name)
            exclusive.append(0)
            return functions.count - 1
        }

        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            guard let first = line.first else { continue }
            if first.isNumber || first == "+" || first == "-" || first == "*" {
                // A cost line: the positions, then one count per event
                // (counts missing at the end are zero).
                guard let column = eventColumn else {
                    throw CallgrindDumpError(source: source, line: lineNumber, problem: "a cost before the events line")
                }
                let fields = line.split(separator: " ")
                let field = positionCount + column
                let value: UInt64
                if field < fields.count {
                    guard let parsed = UInt64(fields[field]) else {
                        throw CallgrindDumpError(
                            source: source, line: lineNumber, problem: "not a count: \(fields[field])")
                    }
                    value = parsed
                } else {
                    value = 0
                }
                guard let caller = current else {
                    throw CallgrindDumpError(source: source, line: lineNumber, problem: "a cost outside any function")
                }
                if pendingCall, let callee {
                    callCost[caller, default: [:]][callee, default: 0] &+= value
                    pendingCall = false
                } else {
                    exclusive[caller] &+= value
                }
                continue
            }
            guard let equals = line.firstIndex(of: "=") ?? line.firstIndex(of: ":") else { continue }
            let key = line[..<equals]
            let value = line[line.index(after: equals)...].drop { $0 == " " }
            switch key {
            case "fn":
                current = index(of: resolve(value, kind: "fn"))
                pendingCall = false
            case "cfn", "cfi", "cfl", "cob":
                if key == "cfn" { callee = index(of: resolve(value, kind: "fn")) }
            case "calls":
                pendingCall = true
            case "positions":
                positionCount = max(value.split(separator: " ").count, 1)
            case "events":
                let events = value.split(separator: " ")
                guard let column = events.firstIndex(of: "Ir") else {
                    throw CallgrindDumpError(source: source, line: lineNumber, problem: "no Ir event in \(value)")
                }
                eventColumn = column
            case "summary":
                summary = value.split(separator: " ").first.flatMap { UInt64($0) }
            case "totals":
                total = value.split(separator: " ").first.flatMap { UInt64($0) }
            default:
                continue
            }
        }
        guard eventColumn != nil else {
            throw CallgrindDumpError(source: source, line: lineNumber, problem: "not a callgrind dump (no events line)")
        }
        var inclusive = exclusive
        var calls: [InstructionProfile.Call] = []
        for (caller, edges) in callCost {
            for (calleeIndex, cost) in edges {
                calls.append(InstructionProfile.Call(caller: caller, callee: calleeIndex))
                // A recursive call's cost is already the function's own.
                if calleeIndex != caller { inclusive[caller] &+= cost }
            }
        }
        let all = total ?? summary ?? exclusive.reduce(0, &+)
        inclusive = inclusive.map { min($0, all) }
        calls.sort { ($0.caller, $0.callee) < ($1.caller, $1.callee) }
        profile = InstructionProfile(
            functions: functions, exclusive: exclusive, inclusive: inclusive, calls: calls, iterations: 1, total: all)
    }

    /// A dump's function name as a profile shows it: demangled, and an
    /// address callgrind could not name (`0x000000000040f1c2`) as
    /// `(no symbol)`.
    static func readableName(_ name: String) -> String {
        if name.hasPrefix("0x"), name.dropFirst(2).allSatisfy(\.isHexDigit) { return "(no symbol)" }
        // Callgrind marks a function's copies by context (`name'2` for a
        // recursion level): one function.
        var base = Substring(name)
        if let quote = base.lastIndex(of: "'"), base[base.index(after: quote)...].allSatisfy(\.isNumber),
            base.index(after: quote) < base.endIndex
        {
            base = base[..<quote]
        }
        return SymbolDemangling.readableName(String(base))
    }
}

/// A callgrind dump that could not be read: the file, the line and what is
/// wrong.
struct CallgrindDumpError: Error, CustomStringConvertible {
    /// The dump file.
    var source: String
    /// The line, from 1.
    var line: Int
    /// What is wrong there.
    var problem: String

    var description: String { "\(source):\(line): \(problem)" }
}
