import CStrobe
import StrobeEncoding

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Names the code this process sampled, on the background writer's thread:
/// the executable mappings of `/proc/self/maps`, each file's ELF function
/// symbols (`.symtab`, else `.dynsym` and the code its IFUNCs chose; the
/// vDSO's from its image in memory) and GNU build id, and Swift names
/// demangled by the Swift runtime's `swift_demangle`, shortened to the
/// form a reader scans (``SwiftSymbolName``).
///
/// The maps are read when a session starts and again when a program
/// counter falls outside every mapping known (a library loaded since).
/// Files and names are cached for the life of the process, in ``shared``,
/// so a session pays for loading a file's symbols only if none before it
/// did.
///
/// `@unchecked Sendable`: the one instance is used only under the lock of
/// ``shared``.
final class ProcessSymbols: @unchecked Sendable {
    /// The process's one instance.
    static let shared = SanitizedMutex(ProcessSymbols())

    private var mappings: [ProfileMapping] = []
    private var files: [String: FileSymbols] = [:]
    private var names: [String: String] = [:]
    private var reloadedFor: Set<UInt64> = []
    private var rules: [UInt64: UnwindRule?] = [:]

    private final class FileSymbols {
        let table: OpaquePointer?
        let buildID: String

        init(path: String) {
            let isVDSO = path == ProcessSymbols.vdsoPath
            table = isVDSO ? cstrobe_vdso_symbols_load() : cstrobe_elf_symbols_load(path)
            var bytes = [UInt8](repeating: 0, count: 64)
            let length =
                isVDSO ? cstrobe_vdso_build_id(&bytes, bytes.count) : cstrobe_elf_build_id(path, &bytes, bytes.count)
            buildID = bytes.prefix(length).map { byte in
                let text = String(byte, radix: 16)
                return byte < 16 ? "0" + text : text
            }.joined()
        }

        deinit { cstrobe_elf_symbols_free(table) }
    }

    private init() {}

    /// The name `/proc/self/maps` gives the vDSO, whose symbols are read
    /// from its image in memory.
    static let vdsoPath = "[vdso]"

    /// Reads the mappings afresh, for a new session.
    func refresh() {
        reloadedFor = []
        rules = [:]
        readMaps()
    }

    /// The function and mapping of `pc`.
    func resolve(_ pc: UInt64) -> ResolvedFrame {
        var mapping = find(pc)
        if mapping == nil, !reloadedFor.contains(pc >> 12) {
            reloadedFor.insert(pc >> 12)
            readMaps()
            mapping = find(pc)
        }
        guard let mapping else { return ResolvedFrame(function: nil, mapping: nil, relativePC: pc) }
        let fileOffset = pc - mapping.start + mapping.fileOffset
        let file = symbols(of: mapping.path)
        var symbolOffset: UInt64 = 0
        guard let table = file.table, let raw = cstrobe_elf_symbols_lookup(table, fileOffset, &symbolOffset) else {
            // No symbol covers it (a PLT stub, stripped code): the file and
            // the offset of the function's start (its FDE's), so that each
            // function is one row whatever address in it was sampled; the
            // offset of the address where no FDE covers it either.
            let name = mapping.path.split(separator: "/").last.map(String.init) ?? mapping.path
            var rule = cstrobe_cfa_rule()
            var start = fileOffset
            if cstrobe_cfa_rule_at(pc, &rule) != 0, rule.function_start <= pc, rule.function_start >= mapping.start {
                start = rule.function_start - mapping.start + mapping.fileOffset
            }
            return ResolvedFrame(
                function: "\(name)+0x\(String(start, radix: 16))", mapping: withBuildID(mapping, file),
                relativePC: start)
        }
        return ResolvedFrame(
            function: demangled(raw), mapping: withBuildID(mapping, file), relativePC: fileOffset - symbolOffset)
    }

    /// The call-frame information's rule at `address` of this process
    /// (`cstrobe_cfa_rule_at`), nil where no FDE covers it or its rule is
    /// one the unwinder does not follow (a CFA expression, as in a PLT).
    /// Answers are cached per address.
    func unwindRule(_ address: UInt64) -> UnwindRule? {
        if let known = rules[address] { return known }
        let rule = Self.readRule(address)
        if rules.count >= 1 << 16 { rules.removeAll(keepingCapacity: true) }
        rules[address] = rule
        return rule
    }

    private static func readRule(_ address: UInt64) -> UnwindRule? {
        var raw = cstrobe_cfa_rule()
        guard cstrobe_cfa_rule_at(address, &raw) != 0 else { return nil }
        let base: UnwindRule.Base
        switch raw.cfa_register {
        case Int32(CSTROBE_DWARF_SP): base = .stackPointer
        case Int32(CSTROBE_DWARF_FP): base = .framePointer
        default: return nil
        }
        func saved(_ rule: cstrobe_saved_rule, _ offset: Int64) -> UnwindRule.Saved? {
            switch rule {
            case CSTROBE_SAVED_UNCHANGED: .unchanged
            case CSTROBE_SAVED_AT_CFA: .atCFA(offset)
            case CSTROBE_SAVED_UNDEFINED: .undefined
            default: nil
            }
        }
        guard let returnAddress = saved(raw.return_address, raw.return_address_offset),
            let framePointer = saved(raw.frame_pointer, raw.frame_pointer_offset)
        else { return nil }
        return UnwindRule(
            base: base, offset: raw.cfa_offset, returnAddress: returnAddress, framePointer: framePointer)
    }

    private func withBuildID(_ mapping: ProfileMapping, _ file: FileSymbols) -> ProfileMapping {
        var mapping = mapping
        mapping.buildID = file.buildID
        return mapping
    }

    private func symbols(of path: String) -> FileSymbols {
        if let file = files[path] { return file }
        let file = FileSymbols(path: path)
        files[path] = file
        return file
    }

    private func demangled(_ raw: UnsafePointer<CChar>) -> String {
        let mangled = String(cString: raw)
        if let name = names[mangled] { return name }
        let name = SymbolDemangling.readableName(mangled)
        names[mangled] = name
        return name
    }

    private func find(_ pc: UInt64) -> ProfileMapping? {
        var low = 0
        var high = mappings.count
        while low < high {
            let middle = (low + high) / 2
            if mappings[middle].start <= pc { low = middle + 1 } else { high = middle }
        }
        guard low > 0, pc < mappings[low - 1].end else { return nil }
        return mappings[low - 1]
    }

    /// Reads the executable, file-backed mappings of `/proc/self/maps`, and
    /// the vDSO's.
    private func readMaps() {
        guard let file = fopen("/proc/self/maps", "r") else { return }
        defer { fclose(file) }
        var found: [ProfileMapping] = []
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0, let line {
            let fields = String(cString: line).split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1].contains("x") else { continue }
            let path = fields[5].trimmingCharacters()
            guard path.hasPrefix("/") || path == Self.vdsoPath else { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16),
                let offset = UInt64(fields[2], radix: 16)
            else { continue }
            found.append(ProfileMapping(start: start, end: end, fileOffset: offset, path: path, buildID: ""))
        }
        mappings = found.sorted { $0.start < $1.start }
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> String {
        String(drop(while: { $0 == " " }).prefix(while: { $0 != "\n" }))
    }
}
