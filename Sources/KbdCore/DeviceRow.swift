/// One line of a device listing (`kbd-commandd devices`, the socket's `list_devices`):
/// a node with its keyboard verdict, or why it could not be opened.
public struct DeviceRow: Sendable, Equatable {
    public var path: String
    public var name: String
    /// The bus/vendor/product/version, where the listing shows it.
    public var inputID: InputID?
    public var verdict: KeyboardClassifier.Verdict?
    public var error: String?
    /// The daemon's id while it holds the device open.
    public var id: DeviceID?
    /// Whether the listing says if the device is open (the daemon's does, a one-off scan's does not).
    public var reportsOpen: Bool
    /// Why the service grabs the keyboard (EVIOCGRAB: its keys reach no other program), if it does.
    public var grabbed: String?

    public init(path: String, name: String, inputID: InputID? = nil, verdict: KeyboardClassifier.Verdict? = nil,
                error: String? = nil, id: DeviceID? = nil, reportsOpen: Bool = false) {
        self.path = path
        self.name = name
        self.inputID = inputID
        self.verdict = verdict
        self.error = error
        self.id = id
        self.reportsOpen = reportsOpen
    }
}
