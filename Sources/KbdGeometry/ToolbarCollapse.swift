/// Whether the mini toolbar is expanded or collapsed to a handle at one side
/// of the screen.
///
/// The toolbar is system UI laid out in screen terms: `leading` is the
/// screen's left side and `trailing` its right side. A right-to-left window
/// sees a toolbar collapsed to the screen's left near its *trailing* edge.
public enum ToolbarCollapse: String, Sendable, Hashable, CaseIterable {
    /// Expanded, centred at the bottom (scenario value `"none"`).
    case expanded = "none"
    /// Collapsed to a handle at the screen's bottom-left corner.
    case leading
    /// Collapsed to a handle at the screen's bottom-right corner.
    case trailing
}
