/// What the controller needs from the toolkit (GTK 3 with gtk-layer-shell in
/// kbd-commandd-bar): a main loop that watches the socket and runs one timer, and two
/// surfaces that draw views. It calls back `BarController.readable()`, `timerFired()`,
/// `tapped(_:)` and `resized(_:)` (the bar's surface got a new width).
public protocol BarToolkit: AnyObject {
    /// Watches `fd` for reading (replacing the one watched before); -1 stops watching.
    func watch(fd: Int32)
    /// Arms the one-shot timer (replacing an armed one); -1 disarms it.
    func arm(milliseconds: Int)
    /// Shows the toolbar as `view` says, or hides it (nil).
    func draw(toolbar: ToolbarView?)
    /// Shows the HUD as `view` says, or hides it (nil).
    func draw(hud: HudView?)
    /// The monotonic clock in microseconds (`KBD_BAR_TRACE`'s lines).
    func monotonicMicroseconds() -> Int64
    /// How wide `text` is drawn on a button, in pixels (the toolkit's font).
    func textWidth(_ text: String) -> Int
    /// The output's width in pixels before the bar's surface has one (0: not known).
    func outputWidth() -> Int
}
