public import KbdCore
/// Turns `EV_KEY` events into `KeyEvent`s with xkbcommon, one xkb state (and
/// compose state) per device, following libxkbcommon's
/// `tools/interactive-evdev.c`: keycode = evdev code + 8, keysyms and text
/// read before `xkb_state_update_key`, kernel repeat ignored for keys the
/// keymap says do not repeat, repeats never change the state.
///
/// It keeps the set of keys each device holds, drops impossible transitions
/// (a press of a key already down, a release or repeat of a key not down) and
/// counts them, and synthesises releases when a device goes away or resyncs,
/// so no key or modifier stays stuck.
public final class KeyMapper {
    public struct Options: Sendable {
        /// Fill `utf8` on key events (only needed when key events are printed).
        public var wantsText: Bool
        /// Run compose and dead-key sequences (fills `composedText`).
        public var compose: ComposeSource
        /// Sticky keys: a modifier tapped alone latches for the next key, twice locks (`StickyKeys`).
        public var stickyKeys: Bool

        public init(wantsText: Bool = false, compose: ComposeSource = .none, stickyKeys: Bool = false) {
            self.wantsText = wantsText
            self.compose = compose
            self.stickyKeys = stickyKeys
        }
    }

    /// Counts of events the mapper did not turn into key events.
    public struct Counters: Sendable, Equatable {
        public var pressWhileDown = 0
        public var releaseWhileUp = 0
        public var repeatWhileUp = 0
        public var repeatIgnored = 0
        public var badValue = 0
        public var dropped: Int { pressWhileDown + releaseWhileUp + repeatWhileUp + badValue }
    }

    private final class DeviceKeyboard {
        let state: XkbState
        /// `KeyPositions` of the state's keymap: the US keysym per layout and code (a `let`:
        /// read on every key event without an exclusivity check).
        let positions: KeyPositions
        let compose: ComposeState?
        /// Keys down, in the order they went down.
        var down: [UInt16] = []
        /// Sticky keys' latches and locks; nil when sticky keys are off.
        var sticky: StickyKeys?
        /// The locks sticky keys last put into the xkb state.
        var stickyLockMask: UInt32 = 0
        /// Reads with a keymap of its own (a `[device.keymap]`): `setKeymap` leaves it as it is.
        let ownKeymap: Bool
        init(state: XkbState, compose: ComposeState?, sticky: Bool, positions: KeyPositions, ownKeymap: Bool = false) {
            self.state = state
            self.positions = positions
            self.compose = compose
            self.sticky = sticky ? StickyKeys() : nil
            self.ownKeymap = ownKeymap
        }

        /// The same keyboard on a new state (another keymap): the keys held stay held,
        /// compose and sticky latches start over.
        init(moving old: DeviceKeyboard, to state: XkbState, positions: KeyPositions) {
            self.state = state
            self.positions = positions
            compose = old.compose
            compose?.reset()
            down = old.down
            ownKeymap = old.ownKeymap
            sticky = old.sticky == nil ? nil : StickyKeys()
            for code in down { state.update(code: code, down: true) }
        }
    }

    public private(set) var keymap: XkbKeymap
    /// The options it was made with (`stickyKeysOn` says whether sticky keys are on now).
    public let options: Options
    /// Whether sticky keys are on now (the config's, or the desktop's setting).
    public private(set) var stickyKeysOn: Bool
    /// The layout locked in every device's state (the desktop's active layout); nil: each
    /// device starts at the first layout and switches with its own keys.
    public private(set) var lockedLayout: Int?
    private let composeTable: ComposeTable?
    private var devices = DeviceMap<DeviceKeyboard>()
    public private(set) var counters = Counters()

    public init(keymap: XkbKeymap, options: Options = Options()) throws(KeymapError) {
        self.keymap = keymap
        self.options = options
        self.stickyKeysOn = options.stickyKeys
        switch options.compose {
        case .none: composeTable = nil
        default: composeTable = try ComposeTable(context: keymap.context, source: options.compose)
        }
    }

    /// Starts tracking a device with a fresh state (no keys down, first layout).
    /// With `keymap` (and `layout` locked) or `sticky`, the device reads as its seat does
    /// (a session there claimed it) instead of as the mapper's own settings say.
    public func attach(_ device: DeviceID, keymap seatKeymap: XkbKeymap? = nil, layout seatLayout: Int? = nil, sticky: Bool? = nil) throws(KeymapError) {
        try attach(device, keymap: seatKeymap, layout: seatLayout, sticky: sticky, own: false)
    }

    /// Starts tracking a keyboard that reads with a keymap of its own (its `[device.keymap]`),
    /// first layout: neither `setKeymap` (a desktop's keymap) nor a locked layout changes it.
    public func attach(_ device: DeviceID, ownKeymap: XkbKeymap, sticky: Bool? = nil) throws(KeymapError) {
        try attach(device, keymap: ownKeymap, layout: nil, sticky: sticky, own: true)
    }

    private func attach(_ device: DeviceID, keymap seatKeymap: XkbKeymap?, layout seatLayout: Int?, sticky: Bool?, own: Bool) throws(KeymapError) {
        devices[device] = DeviceKeyboard(
            state: try XkbState(keymap: seatKeymap ?? keymap), compose: try composeTable.map { t throws(KeymapError) in try ComposeState(table: t) },
            sticky: sticky ?? stickyKeysOn, positions: positions(for: seatKeymap ?? keymap), ownKeymap: own)
        guard !own else { return }
        let layout = seatKeymap == nil ? lockedLayout : seatLayout
        if let layout { devices[device]?.state.lockLayout(min(max(0, layout), max(0, (seatKeymap ?? keymap).layoutCount - 1))) }
    }

    /// Maps keys with `keymap` from now on (a desktop's keymap, or the service's own back),
    /// with `layout` locked (nil: the first layout, for a new keymap; unchanged otherwise).
    /// The same keymap object keeps each device's state and only locks the layout; another
    /// gets fresh states holding the same keys down (the keycodes do not change), with
    /// compose sequences and sticky latches reset. Never on the per-event path: the mapping
    /// reads `keymap` as before.
    public func setKeymap(_ keymap: XkbKeymap, layout: Int?) throws(KeymapError) {
        let changed = keymap !== self.keymap
        if changed {
            let positions = positions(for: keymap)
            for (id, kbd) in devices.entries where !kbd.ownKeymap {
                devices[id] = DeviceKeyboard(moving: kbd, to: try XkbState(keymap: keymap), positions: positions)
            }
            self.keymap = keymap
        }
        let layout = layout.map { min(max(0, $0), max(0, keymap.layoutCount - 1)) }
        lockedLayout = layout
        if let layout { for (_, kbd) in devices.entries where !kbd.ownKeymap { kbd.state.lockLayout(layout) } }
    }

    /// Maps only `ids` with `keymap` and `layout` locked (one seat's keyboards); the mapper's
    /// own keymap, for the others and for devices attached later, stays as it is.
    public func setKeymap(_ keymap: XkbKeymap, layout: Int?, devices ids: [DeviceID]) throws(KeymapError) {
        let layout = layout.map { min(max(0, $0), max(0, keymap.layoutCount - 1)) }
        for id in ids {
            guard let kbd = devices[id], !kbd.ownKeymap else { continue }
            let moved = kbd.state.keymap === keymap ? kbd
                : DeviceKeyboard(moving: kbd, to: try XkbState(keymap: keymap), positions: positions(for: keymap))
            devices[id] = moved
            if let layout { moved.state.lockLayout(layout) }
        }
    }

    /// Turns sticky keys on or off for `ids` only (one seat's keyboards).
    public func setStickyKeys(_ on: Bool, devices ids: [DeviceID]) {
        for id in ids { if let kbd = devices[id] { setSticky(on, kbd) } }
    }

    private func setSticky(_ on: Bool, _ kbd: DeviceKeyboard) {
        if on {
            if kbd.sticky == nil { kbd.sticky = StickyKeys() }
        } else if kbd.sticky != nil {
            kbd.state.setSticky(latched: 0, locked: 0, replacing: kbd.stickyLockMask)
            kbd.sticky = nil
            kbd.stickyLockMask = 0
        }
    }

    /// Turns sticky keys on or off for every device (the desktop's setting); turned off,
    /// what they latched or locked is released.
    public func setStickyKeys(_ on: Bool) {
        guard on != stickyKeysOn else { return }
        stickyKeysOn = on
        for (_, kbd) in devices.entries {
            if on {
                kbd.sticky = StickyKeys()
            } else if kbd.sticky != nil {
                kbd.state.setSticky(latched: 0, locked: 0, replacing: kbd.stickyLockMask)
                kbd.sticky = nil
                kbd.stickyLockMask = 0
            }
        }
    }

    /// The localized key positions of `keymap` (made once per keymap; never per event).
    private func positions(for keymap: XkbKeymap) -> KeyPositions { keymap.keyPositions }

    /// How `chord` is shown and typed on the mapper's keymap at its locked layout (the
    /// desktop's active one, else the first): nil when it is typeable as written, else the
    /// keys it localizes to (`localize`).
    public func localization(of chord: ChordKey) -> ChordLocalization? {
        ChordLocalization(chord, keymap: keymap, layout: lockedLayout ?? 0, positions: positions(for: keymap))
    }

    /// How chords show on the keycaps of the mapper's keymap at its locked layout (the HUD
    /// and the bar; not on the per-event path).
    public func keycaps() -> ChordKeycaps {
        ChordKeycaps(keymap: keymap, layout: lockedLayout ?? 0, positions: positions(for: keymap))
    }

    /// The positions of `keymap` (the US reference compiled on first need), for `check`.
    public func keyPositions(_ keymap: XkbKeymap) -> KeyPositions { positions(for: keymap) }

    /// Keys the device holds, in press order.
    public func keysDown(_ device: DeviceID) -> [UInt16] { devices[device]?.down ?? [] }

    /// The device's effective modifiers right now.
    public func modifiers(_ device: DeviceID) -> ModifierSet { devices[device]?.state.modifiers ?? [] }

    /// The modifiers sticky keys latched and locked on the device (empty when off).
    public func sticky(_ device: DeviceID) -> (latched: ModifierSet, locked: ModifierSet) {
        guard let kbd = devices[device], let s = kbd.sticky else { return ([], []) }
        return (kbd.state.keymap.modifiers(fromMask: s.latched), kbd.state.keymap.modifiers(fromMask: s.locked))
    }

    /// The device's effective layout right now.
    public func layout(_ device: DeviceID) -> Int { devices[device]?.state.effectiveLayout ?? 0 }

    /// Stops tracking a device; returns releases for every key it still held
    /// (most recent first), so modifiers do not stay stuck downstream.
    public func detach(_ device: DeviceID, at time: EventTime) -> [KeyEvent] {
        let releases = releaseAll(device, at: time)
        devices[device] = nil
        return releases
    }

    /// Releases every key the device holds (after a resynchronisation that could
    /// not tell which keys are still down); returns the synthetic releases.
    public func releaseAll(_ device: DeviceID, at time: EventTime) -> [KeyEvent] {
        guard let kbd = devices[device] else { return [] }
        var out: [KeyEvent] = []
        for code in kbd.down.reversed() {
            if let e = synthetic(kbd, device: device, time: time, code: code, state: .release) { out.append(e) }
        }
        kbd.compose?.reset()
        return out
    }

    /// Brings the device to exactly `keys` down (a resync from the kernel's key
    /// state): releases keys no longer down, presses keys newly down.
    public func synchronize(_ device: DeviceID, keysDown keys: Set<UInt16>, at time: EventTime) -> [KeyEvent] {
        guard let kbd = devices[device] else { return [] }
        var out: [KeyEvent] = []
        for code in kbd.down.reversed() where !keys.contains(code) {
            if let e = synthetic(kbd, device: device, time: time, code: code, state: .release) { out.append(e) }
        }
        for code in keys.sorted() where !kbd.down.contains(code) {
            if let e = synthetic(kbd, device: device, time: time, code: code, state: .press) { out.append(e) }
        }
        kbd.compose?.reset()
        return out
    }

    /// What became of one `EV_KEY` event.
    public enum Outcome: Sendable {
        /// The key event xkbcommon made of it.
        case key(KeyEvent)
        /// An impossible transition or a bad value, discarded and counted in `counters`
        /// (a press of a key already down, a release or repeat of a key not down).
        case dropped
        /// Nothing to do: a kernel repeat of a key the keymap says does not repeat,
        /// a device not attached, or not a key event.
        case ignored
    }

    /// Maps one `EV_KEY` event of an attached device.
    public func map(_ event: InputEvent, device: DeviceID) -> Outcome {
        guard event.type == EventType.key, let kbd = devices[device] else { return .ignored }
        guard let state = KeyState(value: event.value) else {
            counters.badValue += 1
            return .dropped
        }
        // Built in place: returning `.key(KeyEvent(…))` from the mapping made the event twice
        // and copied one (retaining and releasing its strings) on every key event.
        var key = KeyEvent(time: event.time, device: device, code: event.code, state: state, keysym: .noSymbol, modifiers: [],
                           layout: 0, producesText: false, chord: ChordKey(modifiers: [], keysym: .noSymbol))
        switch map(kbd, device: device, time: event.time, code: event.code, state: state, into: &key) {
        case .key: return .key(key)
        case .dropped: return .dropped
        case .ignored: return .ignored
        }
    }

    private enum Verdict { case key, dropped, ignored }

    /// Maps one `EV_KEY` event of an attached device; nil when it is dropped or ignored.
    public func handle(_ event: InputEvent, device: DeviceID) -> KeyEvent? {
        if case .key(let key) = map(event, device: device) { return key }
        return nil
    }

    private func synthetic(_ kbd: DeviceKeyboard, device: DeviceID, time: EventTime, code: UInt16, state: KeyState) -> KeyEvent? {
        var event = KeyEvent(time: time, device: device, code: code, state: state, keysym: .noSymbol, modifiers: [],
                             layout: 0, producesText: false, chord: ChordKey(modifiers: [], keysym: .noSymbol))
        // Not typed: a synthetic release of a modifier is no tap.
        kbd.sticky?.forget(code: code)
        guard case .key = map(kbd, device: device, time: time, code: code, state: state, into: &event) else { return nil }
        event.synthetic = true
        return event
    }

    /// Fills `event` (time, device, code and state already set) when the key event counts.
    private func map(_ kbd: DeviceKeyboard, device: DeviceID, time: EventTime, code: UInt16, state: KeyState,
                     into event: inout KeyEvent) -> Verdict {
        // The device's own keymap: its seat may read with a desktop's (set_keymap).
        let keymap = kbd.state.keymap
        let isDown = kbd.down.contains(code)
        switch state {
        case .press:
            if isDown { counters.pressWhileDown += 1; return .dropped }
        case .release:
            if !isDown { counters.releaseWhileUp += 1; return .dropped }
        case .repeat:
            if !isDown { counters.repeatWhileUp += 1; return .dropped }
            if !keymap.keyRepeats(code: code) { counters.repeatIgnored += 1; return .ignored }
        }
        let xkb = kbd.state
        let keysym = xkb.keysym(code: code)
        let modifiers = xkb.modifiers
        // One layout: no per-key or effective layout query needed.
        let single = keymap.layoutCount == 1
        let layout = single ? 0 : xkb.layout(code: code)
        let activeLayout = single ? 0 : xkb.effectiveLayout
        // Printable text, from the keysym (Caps Lock already applied by xkb); the
        // control transformation only matters with Ctrl, where text never counts.
        let utf32 = keysym.utf32
        let producesText = utf32 >= 0x20 && utf32 != 0x7F
        var utf8: String?
        var composed: String?
        if options.wantsText { utf8 = xkb.utf8(code: code) }
        if state != .release, let compose = kbd.compose {
            let (status, text) = compose.feed(keysym)
            if status == .composed, options.wantsText { composed = text }
        }

        // Chord forms: level one of the active layout, or of the first Latin layout
        // when the active one is not Latin (Ctrl+C on Russian).
        let chordLayout = single ? 0 : keymap.chordLayout(active: layout)
        var levelOne = keymap.levelOneKeysym(code: code, layout: chordLayout)
        if levelOne == .noSymbol { levelOne = keysym }
        let chordMods = modifiers.intersection(.chordModifiers)
        let chord = ChordKey(modifiers: chordMods, keysym: levelOne)
        var alternateMods = chordMods
        if !chordMods.isEmpty {
            var consumed = xkb.consumedModifiers(code: code)
            if keysym.isCased { consumed.remove(.shift) }
            alternateMods.subtract(consumed)
        }
        let alternate = ChordKey(modifiers: alternateMods, keysym: keysym)

        let isModifierKey = keymap.isModifierKey(code: code)
        if state == .press {
            kbd.down.append(code)
            if kbd.sticky == nil {
                xkb.update(code: code, down: true)
            } else {
                stickyPress(kbd, code: code, isModifierKey: isModifierKey)
            }
        } else if state == .release {
            kbd.down.removeAll { $0 == code }
            xkb.update(code: code, down: false)
            if isModifierKey, kbd.sticky?.modifierReleased(code: code) == true { applySticky(kbd) }
        }
        if let sticky = kbd.sticky {
            event.stickyLatched = keymap.modifiers(fromMask: sticky.latched)
            event.stickyLocked = keymap.modifiers(fromMask: sticky.locked)
        }
        event.keysym = keysym
        event.modifiers = modifiers
        event.layout = activeLayout
        event.producesText = producesText
        event.utf8 = utf8
        event.composedText = composed
        event.chord = chord
        event.alternateChord = alternate == chord ? nil : alternate
        event.isModifierKey = isModifierKey
        // localize and mirror: nothing to read for a keymap with neither (a plain us one).
        if kbd.positions.isActive {
            let usKeysym = kbd.positions.localized(code: code, layout: chordLayout)
            if usKeysym != .noSymbol { event.localizedChord = ChordKey(modifiers: chordMods, keysym: usKeysym) }
            event.rightToLeft = kbd.positions.rightToLeft(activeLayout)
        }
        return .key
    }

    /// A press with sticky keys on: a modifier key records what it set; any other key spends the latch
    /// (it was read with the latch, before this update).
    private func stickyPress(_ kbd: DeviceKeyboard, code: UInt16, isModifierKey: Bool) {
        let xkb = kbd.state
        if isModifierKey {
            let before = xkb.depressedMask
            xkb.update(code: code, down: true)
            kbd.sticky!.modifierPressed(code: code, mask: xkb.depressedMask & ~before)
        } else {
            xkb.update(code: code, down: true)
            kbd.sticky!.otherKeyPressed()
            if kbd.sticky!.clearLatch() { applySticky(kbd) }
        }
    }

    /// Puts sticky keys' latches and locks into the device's xkb state.
    private func applySticky(_ kbd: DeviceKeyboard) {
        guard let sticky = kbd.sticky else { return }
        // Every modifier sticky keys could have locked is replaced: the ones it set and unset.
        kbd.state.setSticky(latched: sticky.latched, locked: sticky.locked, replacing: kbd.stickyLockMask | sticky.locked)
        kbd.stickyLockMask = sticky.locked
    }
}
