import Foundation

/// Where a report's verdicts come from when the results carry the
/// decisions `strobe compare` recorded beside them: those decisions as they
/// were reached, or a judgement made again on request.
public struct DecisionOrigin: Sendable, Hashable, Codable {
    /// How the verdicts were reached.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The decisions `strobe compare` recorded, shown as they were: each
        /// verdict, estimate and interval from the look that reached it.
        case recorded
        /// The results judged again, all rounds at once: the numbers may
        /// differ from the recorded decisions.
        case rejudged
    }

    /// How the verdicts were reached.
    public var kind: Kind
    /// The decisions file, relative to the results directory
    /// (`decisions.json`), so that a report posted elsewhere names no
    /// path of the machine that made it.
    public var path: String
    /// Why the results were judged again (``Kind/rejudged`` only): asked
    /// for, or the results changed since the decisions were recorded.
    public var reason: String?

    /// An origin of `kind` from the decisions file at `path`.
    public init(kind: Kind, path: String, reason: String? = nil) {
        self.kind = kind
        self.path = path
        self.reason = reason
    }

    /// "Verdicts as strobe compare decided them, …, recorded in
    /// decisions.json of the results directory (--rejudge judges the
    /// results again)."
    public var line: String {
        switch kind {
        case .recorded:
            return "Verdicts as strobe compare decided them, each from the look that reached it, recorded in "
                + "\(path) of the results directory (--rejudge judges the results again)."
        case .rejudged:
            return "Re-judged (\(reason ?? "asked for")): all rounds judged again at once, so the numbers may differ "
                + "from the decisions strobe compare recorded in \(path) of the results directory."
        }
    }
}
