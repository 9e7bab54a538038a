/// The shortcuts bar that replaces the software keyboard while a hardware
/// keyboard is attached.
public struct MiniToolbar: Sendable, Hashable {
    /// How many buttons the bar shows (default 6).
    public var buttons: Int
    /// Expanded, or collapsed to one side of the screen.
    public var collapsed: ToolbarCollapse
    /// The bar's dimensions.
    public var metrics: ToolbarMetrics

    /// A toolbar with `buttons` buttons.
    public init(buttons: Int = 6, collapsed: ToolbarCollapse = .expanded, metrics: ToolbarMetrics = .standard) {
        self.buttons = buttons
        self.collapsed = collapsed
        self.metrics = metrics
    }

    /// The bar's frame on a screen of `screen` size: expanded, centred on the
    /// bottom edge; collapsed, a handle in the bottom-left (`leading`) or
    /// bottom-right (`trailing`) corner.
    public func frame(onScreen screen: Size) -> Rect {
        let height = min(max(metrics.height, 0), screen.height)
        let y = screen.height - height
        switch collapsed {
        case .expanded:
            let width = min(metrics.expandedWidth(buttons: buttons), screen.width)
            return Rect(x: (screen.width - width) / 2, y: y, width: width, height: height)
        case .leading:
            let width = min(max(metrics.handleWidth, 0), screen.width)
            return Rect(x: 0, y: y, width: width, height: height)
        case .trailing:
            let width = min(max(metrics.handleWidth, 0), screen.width)
            return Rect(x: screen.width - width, y: y, width: width, height: height)
        }
    }
}
