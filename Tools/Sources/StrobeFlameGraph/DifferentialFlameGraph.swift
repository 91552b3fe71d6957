/// A differential flame graph: an icicle of the candidate's inclusive
/// amounts (the root on top, each frame as wide as its amount, callees
/// below their callers), each frame marked by its change against the
/// baseline's amount at the same call path (``FrameChange``).
///
/// A frame gone from the candidate is drawn at its baseline width, which
/// widens the frames above it by as much, so that it can be seen and
/// hovered; every other frame is exactly as wide as its candidate amount.
/// Frames narrower than ``Limits/smallestShare`` of the whole, or beyond
/// ``Limits/maximumFrames`` of the widest, are left out (their amounts stay
/// in their callers), and stacks deeper than ``Limits/maximumDepth`` are cut
/// there; ``leftOut`` and ``depthCut`` say so.
public struct DifferentialFlameGraph: Sendable, Hashable {
    /// One frame: a function at one call path.
    public struct Frame: Sendable, Hashable {
        /// The function.
        public var name: String
        /// Its depth: 0 for the root (`all`), 1 for the outermost callers.
        public var depth: Int
        /// The baseline's inclusive amount at this call path.
        public var baseline: Double
        /// The candidate's.
        public var candidate: Double
        /// How it changed.
        public var change: FrameChange
        /// Its left edge, as a share of the root's width.
        public var start: Double
        /// Its width, as a share of the root's.
        public var width: Double
    }

    /// How much a graph keeps.
    public struct Limits: Sendable, Hashable {
        /// Frames narrower than this share of the root are left out.
        public var smallestShare = 0.002
        /// At most this many frames are kept (the widest).
        public var maximumFrames = 1500
        /// Stacks deeper than this are cut there.
        public var maximumDepth = 64

        /// The default limits: 0.2% of the whole, 1,500 frames, depth 64.
        public init() {}
    }

    /// What the graph shows (a test's name, an interval's).
    public var title: String
    /// What the amounts count.
    public var unit: FlameUnit
    /// What one amount is spent in, for a caption: "iteration" (a perf
    /// test's), "instance" (an interval's).
    public var per = "iteration"
    /// The smallest change called one, in ``unit``.
    public var floor: Double
    /// The frames, each caller before its callees, siblings by name; the
    /// first is the root.
    public var frames: [Frame]
    /// Frames left out for being too narrow or beyond the frame limit.
    public var leftOut = 0
    /// Whether some stack was deeper than the depth limit.
    public var depthCut = false
    /// A note per function name, shown when its frames are hovered (the
    /// verdict on the function, where one was judged).
    public var notes: [String: String] = [:]

    /// The graph of `candidate`'s stacks against `baseline`'s, a change
    /// smaller than `floor` being none.
    public init(
        title: String, unit: FlameUnit, baseline: [FlameStack], candidate: [FlameStack], floor: Double,
        limits: Limits = Limits()
    ) {
        self.title = title
        self.unit = unit
        self.floor = floor
        var tree = Tree()
        for stack in baseline { depthCut = tree.add(stack, side: 0, maximumDepth: limits.maximumDepth) || depthCut }
        for stack in candidate { depthCut = tree.add(stack, side: 1, maximumDepth: limits.maximumDepth) || depthCut }
        (frames, leftOut) = tree.frames(floor: floor, limits: limits)
    }

    /// The frames whose change is `change`.
    public func frames(_ change: FrameChange) -> [Frame] { frames.filter { $0.change == change } }

    /// The root's frame.
    public var root: Frame? { frames.first }
}

/// The call paths of both sides merged: a node per path, with each side's
/// inclusive amount.
private struct Tree {
    var names = ["all"]
    var amounts: [[Double]] = [[0, 0]]
    var children: [[String: Int]] = [[:]]
    var depths = [0]

    /// Adds a stack to `side` (0 baseline, 1 candidate); true when it was
    /// cut at `maximumDepth`.
    mutating func add(_ stack: FlameStack, side: Int, maximumDepth: Int) -> Bool {
        var node = 0
        amounts[0][side] += stack.amount
        for name in stack.frames.prefix(maximumDepth) {
            if let child = children[node][name] {
                node = child
            } else {
                let child = names.count
                names.append(name)
                amounts.append([0, 0])
                children.append([:])
                depths.append(depths[node] + 1)
                children[node][name] = child
                node = child
            }
            amounts[node][side] += stack.amount
        }
        return stack.frames.count > maximumDepth
    }

    /// The frames laid out, and how many were left out.
    func frames(floor: Double, limits: DifferentialFlameGraph.Limits) -> ([DifferentialFlameGraph.Frame], Int) {
        let changes = amounts.map { FrameChange.of(baseline: $0[0], candidate: $0[1], floor: floor) }
        // Each node's width: its candidate amount (its baseline one when it
        // is gone), or its children's widths when they add up to more.
        var widths = [Double](repeating: 0, count: names.count)
        for node in stride(from: names.count - 1, through: 0, by: -1) {
            let own = changes[node] == .gone ? amounts[node][0] : amounts[node][1]
            widths[node] = max(own, children[node].values.reduce(0) { $0 + widths[$1] })
        }
        let whole = widths[0]
        guard whole > 0 else { return ([], 0) }
        var threshold = limits.smallestShare * whole
        if names.count > limits.maximumFrames {
            let sorted = widths.sorted(by: >)
            threshold = max(threshold, sorted[limits.maximumFrames])
        }
        var frames: [DifferentialFlameGraph.Frame] = []
        var leftOut = 0
        // Depth first, siblings by name, each child starting where the one
        // before it ended.
        var pending: [(node: Int, start: Double)] = [(0, 0)]
        while let (node, start) = pending.popLast() {
            frames.append(
                .init(
                    name: names[node], depth: depths[node], baseline: amounts[node][0], candidate: amounts[node][1],
                    change: changes[node], start: start / whole, width: widths[node] / whole))
            var next = start
            var kept: [(Int, Double)] = []
            for (_, child) in children[node].sorted(by: { $0.key < $1.key }) {
                if widths[child] <= threshold {
                    leftOut += subtreeSize(child)
                    continue
                }
                kept.append((child, next))
                next += widths[child]
            }
            pending += kept.reversed()
        }
        return (frames, leftOut)
    }

    /// The nodes of the subtree under `node`, with it.
    func subtreeSize(_ node: Int) -> Int {
        var count = 0
        var pending = [node]
        while let next = pending.popLast() {
            count += 1
            pending += children[next].values
        }
        return count
    }
}
