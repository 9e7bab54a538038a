/// The state of the on-screen (software) keyboard. Frames are in screen
/// coordinates.
public enum SoftwareKeyboard: Sendable, Hashable {
    /// Not shown (no text input is active).
    case hidden
    /// Full screen width at the screen's bottom, `height` points tall
    /// (clamped to the screen's height).
    case docked(height: Double)
    /// Full-size keyboard moved off the bottom edge.
    case undocked(frame: Rect)
    /// Split in two halves; `frame` bounds both.
    case split(frame: Rect)
    /// The small floating keyboard.
    case floating(frame: Rect)

    /// The scenario name of the kind: `hidden`, `docked`, `undocked`,
    /// `split` or `floating`.
    public var kindName: String {
        switch self {
        case .hidden: "hidden"
        case .docked: "docked"
        case .undocked: "undocked"
        case .split: "split"
        case .floating: "floating"
        }
    }

    /// The keyboard's frame on a screen of `screen` size, nil when hidden.
    public func frame(onScreen screen: Size) -> Rect? {
        switch self {
        case .hidden:
            return nil
        case .docked(let height):
            let visible = min(max(height, 0), screen.height)
            return Rect(x: 0, y: screen.height - visible, width: screen.width, height: visible)
        case .undocked(let frame), .split(let frame), .floating(let frame):
            return frame
        }
    }
}
