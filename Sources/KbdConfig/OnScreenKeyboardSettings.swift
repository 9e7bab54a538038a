/// `[osk]` in a user's config: how the session agent makes the on-screen keyboard give
/// way while a hardware keyboard is present.
public struct OnScreenKeyboardSettings: Sendable, Equatable {
    public enum Backend: String, Sendable, CaseIterable {
        /// Phosh on Phosh (`XDG_CURRENT_DESKTOP`), else the first of squeekboard, KWin, GNOME
        /// Shell, wvkbd that is running; none when none is.
        case auto
        /// squeekboard (and Phosh): `sm.puri.OSK0` on the session bus.
        case squeekboard
        /// KDE Plasma: KWin's `org.kde.kwin.VirtualKeyboard` `enabled` property.
        case kwin
        /// GNOME Shell: the GSettings key `org.gnome.desktop.a11y.applications
        /// screen-keyboard-enabled`.
        case gnome
        /// Phosh's own keyboard (Stevia, phosh-osk-stub): its `ignore-hw-keyboards` setting
        /// (schema `mobi.phosh.osk`, before Stevia `sm.puri.phosh.osk`) follows the service's
        /// presence instead of phoc's any-keyboard rule, and `sm.puri.OSK0` folds it when a
        /// keyboard comes; the setting is put back when the agent stops.
        case phosh
        /// wvkbd: SIGUSR1 hides it, SIGUSR2 shows it (the user's own processes only).
        case wvkbd
        /// Only the `on_present` / `on_absent` programs.
        case none
    }

    public var backend: Backend = .auto
    /// Run when a hardware keyboard becomes present (argv, no shell).
    public var onPresent: [String] = []
    /// Run when presence goes false (after the service's debounce).
    public var onAbsent: [String] = []

    public init(backend: Backend = .auto, onPresent: [String] = [], onAbsent: [String] = []) {
        self.backend = backend
        self.onPresent = onPresent
        self.onAbsent = onAbsent
    }
}
