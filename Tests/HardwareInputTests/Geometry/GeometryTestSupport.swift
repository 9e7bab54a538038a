import KbdGeometry

/// The iPad Pro 12.9" screen in landscape, used throughout.
let iPadScreen = Size(width: 1366, height: 1024)

/// A window with a 20-point bottom safe area unless told otherwise.
func window(
    _ x: Double, _ y: Double, _ width: Double, _ height: Double,
    id: String = "w", follows: Bool = false, safeBottom: Double = 20, usesBottomSafeArea: Bool = true,
    dismissPadding: Double = 0, direction: LayoutDirection = .ltr, rules: [TrackingRule] = []
) -> AppWindow {
    AppWindow(
        id: id, frame: Rect(x: x, y: y, width: width, height: height),
        safeArea: EdgeInsets(top: 24, bottom: safeBottom), followsUndockedKeyboard: follows,
        usesBottomSafeArea: usesBottomSafeArea, dismissPadding: dismissPadding, direction: direction, rules: rules
    )
}

/// Full screen.
let fullScreen = window(0, 0, 1366, 1024)
/// Windowed multitasking: offset from the corner, bottom above the screen's.
let offsetWindow = window(200, 100, 800, 700)
/// Side by side: a third on the left, a third on the right, a half on the right.
let leftThird = window(0, 0, 455, 1024)
let rightThird = window(911, 0, 455, 1024)
let rightHalf = window(683, 0, 683, 1024)
let leftTwoThirds = window(0, 0, 911, 1024)

func following(_ window: AppWindow) -> AppWindow {
    var copy = window
    copy.followsUndockedKeyboard = true
    return copy
}

func rect(_ x: Double, _ y: Double, _ width: Double, _ height: Double) -> Rect {
    Rect(x: x, y: y, width: width, height: height)
}

func state(
    _ keyboard: SoftwareKeyboard, _ windows: AppWindow..., hardware: Bool = false,
    toolbar: MiniToolbar = MiniToolbar()
) -> GeometryState {
    GeometryState(screen: iPadScreen, windows: windows, keyboard: keyboard, hardwareKeyboard: hardware, toolbar: toolbar)
}
