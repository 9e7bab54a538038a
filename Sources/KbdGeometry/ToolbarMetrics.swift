/// The mini toolbar's dimensions, in points. The defaults approximate the
/// iPadOS shortcuts bar shown while a hardware keyboard is attached.
///
/// Expanded width = `2 × padding + buttons × buttonWidth + (buttons − 1) ×
/// buttonSpacing`, at most the screen's width; 6 buttons make 328 points.
/// Collapsed, the toolbar is a handle `handleWidth` wide (at most the screen's
/// width). Either way it is `height` tall and sits on the screen's bottom edge.
public struct ToolbarMetrics: Sendable, Hashable {
    /// The bar's and the handle's height (default 55).
    public var height: Double
    /// Width of one button (default 44).
    public var buttonWidth: Double
    /// Gap between neighbouring buttons (default 8).
    public var buttonSpacing: Double
    /// Space before the first and after the last button (default 12 each).
    public var padding: Double
    /// Width of the collapsed handle (default 64).
    public var handleWidth: Double

    /// Metrics with the given values; the defaults are ``standard``.
    public init(
        height: Double = 55,
        buttonWidth: Double = 44,
        buttonSpacing: Double = 8,
        padding: Double = 12,
        handleWidth: Double = 64
    ) {
        self.height = height
        self.buttonWidth = buttonWidth
        self.buttonSpacing = buttonSpacing
        self.padding = padding
        self.handleWidth = handleWidth
    }

    /// Height 55, button width 44, spacing 8, padding 12, handle width 64.
    public static let standard = ToolbarMetrics()

    /// The expanded bar's width for `buttons` buttons, before clamping to
    /// the screen.
    public func expandedWidth(buttons: Int) -> Double {
        let count = Double(max(buttons, 0))
        return 2 * padding + count * buttonWidth + max(count - 1, 0) * buttonSpacing
    }
}
