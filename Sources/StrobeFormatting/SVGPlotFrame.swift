import Foundation

/// The frame of an SVG plot: the picture's size, and the margins around the
/// data area that leave room for the axes' labels.
public struct SVGPlotFrame: Sendable, Hashable {
    /// The picture's width.
    public let width: Double
    /// The picture's height.
    public let height: Double
    /// The room left of the data area (for the value axis's labels).
    public let left: Double
    /// The room right of the data area.
    public let right: Double
    /// The room above the data area.
    public let top: Double
    /// The room below the data area (for the position axis's labels).
    public let bottom: Double

    /// A `width` × `height` picture with these margins.
    public init(width: Double, height: Double, left: Double, right: Double, top: Double, bottom: Double) {
        (self.width, self.height) = (width, height)
        (self.left, self.right, self.top, self.bottom) = (left, right, top, bottom)
    }

    /// The data area's width.
    public var dataWidth: Double { width - left - right }
    /// The data area's height.
    public var dataHeight: Double { height - top - bottom }
    /// The vertical position of the data area's bottom edge, where the
    /// position axis runs.
    public var dataBottom: Double { height - bottom }

    /// The vertical position of `value` on a value axis from `low`, at the
    /// data area's bottom, to `high`, at its top.
    public func y(_ value: Double, low: Double, high: Double) -> Double {
        top + (high - value) / (high - low) * dataHeight
    }

    /// The two axes: the value axis up the data area's left edge, the
    /// position axis along its bottom.
    public var axes: String {
        "<line class=\"axis\" x1=\"\(Self.format(left))\" y1=\"\(Self.format(top))\" x2=\"\(Self.format(left))\" "
            + "y2=\"\(Self.format(dataBottom))\"/>"
            + "<line class=\"axis\" x1=\"\(Self.format(left))\" y1=\"\(Self.format(dataBottom))\" "
            + "x2=\"\(Self.format(width - right))\" y2=\"\(Self.format(dataBottom))\"/>"
    }

    /// `value` as an SVG coordinate: one decimal.
    public static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}
