/// An app window and the options of its keyboard layout guide.
public struct AppWindow: Sendable, Hashable {
    /// Identifies the window in scenarios and reports.
    public var id: String
    /// The window's frame in screen coordinates.
    public var frame: Rect
    /// The window's safe-area insets.
    public var safeArea: EdgeInsets
    /// Whether the guide follows an undocked, split or floating keyboard
    /// (`UIKeyboardLayoutGuide.followsUndockedKeyboard`) and the mini toolbar's
    /// real width. Default false: the guide then drops to the window's bottom
    /// for those keyboards, and spans the window's width for the toolbar.
    public var followsUndockedKeyboard: Bool
    /// Whether the guide, when it rests at the bottom, is as tall as the
    /// bottom safe-area inset (true, the default) or has zero height (false).
    public var usesBottomSafeArea: Bool
    /// The height of the region above the guide that belongs to the
    /// keyboard's dismiss gesture (`keyboardDismissPadding`); default 0.
    public var dismissPadding: Double
    /// The window's layout direction; default left to right.
    public var direction: LayoutDirection
    /// The tracking rules registered with this window's guide.
    public var rules: [TrackingRule]

    /// A window with the given options; defaults as UIKit's.
    public init(
        id: String,
        frame: Rect,
        safeArea: EdgeInsets = .zero,
        followsUndockedKeyboard: Bool = false,
        usesBottomSafeArea: Bool = true,
        dismissPadding: Double = 0,
        direction: LayoutDirection = .ltr,
        rules: [TrackingRule] = []
    ) {
        self.id = id
        self.frame = frame
        self.safeArea = safeArea
        self.followsUndockedKeyboard = followsUndockedKeyboard
        self.usesBottomSafeArea = usesBottomSafeArea
        self.dismissPadding = dismissPadding
        self.direction = direction
        self.rules = rules
    }
}
