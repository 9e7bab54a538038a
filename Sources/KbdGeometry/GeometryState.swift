/// Everything the geometry model takes as input: the screen, the windows,
/// the software keyboard, hardware-keyboard presence and the mini toolbar.
///
/// The software keyboard state is kept while a hardware keyboard is present,
/// so it comes back when the hardware keyboard goes away.
public struct GeometryState: Sendable, Hashable {
    /// The default ``nearThreshold``: 20 points.
    public static let defaultNearThreshold: Double = 20
    /// The default ``narrowWidthFraction``: 0.4.
    public static let defaultNarrowWidthFraction: Double = 0.4

    /// The screen's size in points.
    public var screen: Size
    /// The app windows, in reporting order (later ones drawn on top).
    public var windows: [AppWindow]
    /// The software keyboard (what shows when no hardware keyboard is present).
    public var keyboard: SoftwareKeyboard
    /// Whether a hardware keyboard is attached.
    public var hardwareKeyboard: Bool
    /// The shortcuts bar shown instead of the software keyboard while a
    /// hardware keyboard is attached.
    public var toolbar: MiniToolbar
    /// The guide is near a window edge when the gap between them is at most
    /// this many points (default 20).
    public var nearThreshold: Double
    /// A window narrower than this fraction of the screen's width is narrow:
    /// its guide is always away from leading and trailing (default 0.4).
    public var narrowWidthFraction: Double

    /// A state; everything but the screen, windows and keyboard has defaults.
    public init(
        screen: Size,
        windows: [AppWindow],
        keyboard: SoftwareKeyboard,
        hardwareKeyboard: Bool = false,
        toolbar: MiniToolbar = MiniToolbar(),
        nearThreshold: Double = GeometryState.defaultNearThreshold,
        narrowWidthFraction: Double = GeometryState.defaultNarrowWidthFraction
    ) {
        self.screen = screen
        self.windows = windows
        self.keyboard = keyboard
        self.hardwareKeyboard = hardwareKeyboard
        self.toolbar = toolbar
        self.nearThreshold = nearThreshold
        self.narrowWidthFraction = narrowWidthFraction
    }

    /// What is shown: the mini toolbar when a hardware keyboard is present
    /// and the software keyboard would be shown; otherwise the software
    /// keyboard's kind. A hardware keyboard does not bring up the toolbar
    /// while no text input is active (the software keyboard is hidden).
    public var layout: GeometryLayout {
        switch keyboard {
        case .hidden: .hidden
        case _ where hardwareKeyboard: .miniToolbar
        case .docked: .docked
        case .undocked: .undocked
        case .split: .split
        case .floating: .floating
        }
    }

    /// The frame of what is shown (keyboard, toolbar or collapsed handle) in
    /// screen coordinates, nil when hidden.
    public var keyboardFrame: Rect? {
        switch layout {
        case .hidden: nil
        case .miniToolbar: toolbar.frame(onScreen: screen)
        default: keyboard.frame(onScreen: screen)
        }
    }

    /// Whether `window` is narrow: narrower than ``narrowWidthFraction`` of
    /// the screen's width (a third of the screen or a slide-over window on
    /// a 1366-point screen; a half is not narrow).
    public func isNarrow(_ window: AppWindow) -> Bool {
        window.frame.width < narrowWidthFraction * screen.width
    }
}
