public import KbdTOML
public import KbdCore
public import KbdKeymap
public import KbdCommands
/// A loaded configuration: keymap names, settings and the command table.
public struct Config: Sendable {
    public var path: String
    /// Every file read, in merge order: the main file and each drop-in (`ConfigFiles.paths()`);
    /// empty for a config not read from files.
    public var files: [String] = []
    /// `[keymap]`: what the file asks for (unset: `XKB_DEFAULT_*`, else `/etc/default/keyboard`, else `us`).
    public var keymap: KeymapNames
    public var table: CommandTable
    /// `[devices]`: which devices to watch besides the automatic keyboard detection.
    public var devices: DeviceFilter
    /// `[geometry]`: the raw table, interpreted by the geometry model when present.
    public var geometry: TOMLTable?
    /// `[osk]`: what the session agent does with the on-screen keyboard.
    public var osk: OnScreenKeyboardSettings
    /// Where `[keymap]` is, for keymap errors; nil when the file has none.
    public var keymapLocation: SourceLocation? = nil
    /// `[keymap]` names missing from the rules' list that libxkbcommon compiles: used, with a
    /// warning (compileKeymap reports them).
    public var keymapWarnings: [ConfigError.Problem] = []
    /// `[device.keymap]` of each `[[device]]` (`devices.dedicated`, same order): nil where it
    /// has none (the keyboard reads with the service's keymap and follows the desktop's).
    public var deviceKeymaps: [KeymapNames?] = []
    /// Where `grab = true` is, for its warning.
    public var grabLocation: SourceLocation? = nil
    /// `[settings] presence`: what counts as a hardware keyboard.
    public var presence: PresencePolicy = .auto
    /// `[scopes]`: the scopes the session agent activates for the focused window.
    public var scopes: ScopeMap
    /// `[text_input] source`: where the session agent learns that a text field has the focus.
    public var textInputSource: TextInputSource = .auto
    /// `[accessibility] sticky_keys`: a modifier tapped alone latches for the next key (twice: locks).
    public var stickyKeys = false
    /// `[hud]`: when the discoverability HUD shows.
    public var hud = HudSettings()
    /// Whether a `[hud]` key is set.
    public var hudConfigured = false
    /// Where `[hud]` is (the first file that has one), for messages about it.
    public var hudLocation: SourceLocation? = nil
    /// Where `[hud] sequence_delay_ms` is, for its warning.
    public var hudSequenceDelayLocation: SourceLocation? = nil
    /// `[bar] enabled`: whether the session agent starts the shortcuts bar (kbd-commandd-bar);
    /// nil: where the compositor supports layer-shell (the bar exits at once where it does not).
    public var barEnabled: Bool? = nil
    /// `[portal] approve`: "ask" (default), "always" or "never" (the session agent's desktop-portal backend).
    public var portalApprove = "ask"

    public init(path: String, keymap: KeymapNames = KeymapNames(), table: CommandTable, devices: DeviceFilter = DeviceFilter(), geometry: TOMLTable? = nil,
                osk: OnScreenKeyboardSettings = OnScreenKeyboardSettings(), scopes: ScopeMap = ScopeMap()) {
        self.path = path
        self.keymap = keymap
        self.table = table
        self.devices = devices
        self.geometry = geometry
        self.osk = osk
        self.scopes = scopes
    }

    /// An empty configuration (no commands), for replay without `--config`.
    public static func empty() -> Config {
        Config(path: "<none>", table: try! CommandTable(commands: []))
    }
}
