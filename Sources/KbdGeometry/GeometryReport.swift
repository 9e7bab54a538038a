public import KbdJSON
/// The geometry model's output for one state: the overall layout and one
/// ``WindowReport`` per window.
///
/// ``jsonObject(leading:)`` gives the contract's fields (`layout`,
/// `keyboard_frame`, `windows`) after any leading members, so the scenario
/// runner writes `{"step":N,…}` and the daemon
/// `{"event":"geometry","time":T,…}` from the same report.
public struct GeometryReport: Sendable, Hashable {
    /// What is shown.
    public var layout: GeometryLayout
    /// The frame of the keyboard, toolbar or handle in screen coordinates;
    /// nil when hidden.
    public var keyboardFrame: Rect?
    /// One report per window, in the state's window order.
    public var windows: [WindowReport]

    /// A report with the given values.
    public init(layout: GeometryLayout, keyboardFrame: Rect?, windows: [WindowReport]) {
        self.layout = layout
        self.keyboardFrame = keyboardFrame
        self.windows = windows
    }

    /// The window report with `id`, if any.
    public func window(_ id: String) -> WindowReport? {
        windows.first { $0.id == id }
    }

    /// `leading`'s members, then `layout`, `keyboard_frame` and `windows`.
    public func jsonObject(leading: JSONObject = JSONObject()) -> JSONObject {
        var object = leading
        object["layout"] = .string(layout.rawValue)
        object["keyboard_frame"] = keyboardFrame.jsonValue
        object["windows"] = .array(windows.map(\.jsonValue))
        return object
    }

    /// One compact JSON line (without a newline) of ``jsonObject(leading:)``.
    public func jsonLine(leading: JSONObject = JSONObject()) -> String {
        JSONValue.object(jsonObject(leading: leading)).serialized()
    }

    /// Whether the two reports agree on everything but the rules activated
    /// and deactivated by the last change.
    public func hasSameGeometry(as other: GeometryReport) -> Bool {
        layout == other.layout && keyboardFrame == other.keyboardFrame
            && windows.count == other.windows.count
            && zip(windows, other.windows).allSatisfy { $0.hasSameGeometry(as: $1) }
    }
}
