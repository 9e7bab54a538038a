import CXkb

/// Owns one `struct xkb_state` and keeps its keymap alive. Not thread-safe:
/// one device's state lives on one thread.
public final class XkbState {
    let pointer: OpaquePointer
    public let keymap: XkbKeymap

    /// The corresponding C function is `xkb_state_new`.
    public init(keymap: XkbKeymap) throws(KeymapError) {
        guard let state = xkb_state_new(keymap.pointer) else { throw KeymapError(message: "cannot create an xkb state") }
        self.pointer = state
        self.keymap = keymap
    }

    deinit { xkb_state_unref(pointer) }

    /// The keysym the key produces now (Caps Lock applied).
    /// The corresponding C function is `xkb_state_key_get_one_sym`.
    @inline(__always)
    public func keysym(code: UInt16) -> Keysym {
        Keysym(xkb_state_key_get_one_sym(pointer, xkb_keycode_t(code) + 8))
    }

    /// The text the key produces now, "" when none.
    /// The corresponding C function is `xkb_state_key_get_utf8`.
    public func utf8(code: UInt16) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buf in
            let n = xkb_state_key_get_utf8(pointer, xkb_keycode_t(code) + 8, buf.baseAddress, 64)
            guard n > 0 else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: buf.baseAddress, count: min(Int(n), 63)).bindMemory(to: UInt8.self), as: UTF8.self)
        }
    }

    /// The Unicode scalar the key produces now, 0 when none.
    /// The corresponding C function is `xkb_state_key_get_utf32`.
    @inline(__always)
    public func utf32(code: UInt16) -> UInt32 {
        xkb_state_key_get_utf32(pointer, xkb_keycode_t(code) + 8)
    }

    /// The effective modifiers. The corresponding C function is `xkb_state_serialize_mods`.
    @inline(__always)
    public var modifiers: ModifierSet {
        keymap.modifiers(fromMask: xkb_state_serialize_mods(pointer, XKB_STATE_MODS_EFFECTIVE))
    }

    /// The layout the key would use now. The corresponding C function is `xkb_state_key_get_layout`.
    @inline(__always)
    public func layout(code: UInt16) -> Int {
        let l = xkb_state_key_get_layout(pointer, xkb_keycode_t(code) + 8)
        return l == XKB_LAYOUT_INVALID ? effectiveLayout : Int(l)
    }

    /// The effective layout. The corresponding C function is `xkb_state_serialize_layout`.
    public var effectiveLayout: Int {
        Int(xkb_state_serialize_layout(pointer, XKB_STATE_LAYOUT_EFFECTIVE))
    }

    /// Modifiers the key's translation consumes (xkb mode).
    /// The corresponding C function is `xkb_state_key_get_consumed_mods2`.
    @inline(__always)
    public func consumedModifiers(code: UInt16) -> ModifierSet {
        keymap.modifiers(fromMask: xkb_state_key_get_consumed_mods2(pointer, xkb_keycode_t(code) + 8, XKB_CONSUMED_MODE_XKB))
    }

    /// Presses or releases a key. The corresponding C function is `xkb_state_update_key`.
    @inline(__always)
    public func update(code: UInt16, down: Bool) {
        _ = xkb_state_update_key(pointer, xkb_keycode_t(code) + 8, down ? XKB_KEY_DOWN : XKB_KEY_UP)
    }
}

extension XkbState {
    /// The xkb modifier mask of the modifiers held down by keys (not latched or locked).
    /// The corresponding C function is `xkb_state_serialize_mods`.
    public var depressedMask: UInt32 { xkb_state_serialize_mods(pointer, XKB_STATE_MODS_DEPRESSED) }

    /// Replaces the latched modifiers by `latched` and, of the locked ones, those in `replacing`
    /// by `locked` (keys held, the layout and other locks such as Caps Lock are kept): sticky
    /// keys. The corresponding C function is `xkb_state_update_mask`.
    public func setSticky(latched: UInt32, locked: UInt32, replacing: UInt32) {
        let depressed = xkb_state_serialize_mods(pointer, XKB_STATE_MODS_DEPRESSED)
        let otherLocks = xkb_state_serialize_mods(pointer, XKB_STATE_MODS_LOCKED) & ~replacing
        _ = xkb_state_update_mask(
            pointer, depressed, latched, otherLocks | locked,
            xkb_state_serialize_layout(pointer, XKB_STATE_LAYOUT_DEPRESSED),
            xkb_state_serialize_layout(pointer, XKB_STATE_LAYOUT_LATCHED),
            xkb_state_serialize_layout(pointer, XKB_STATE_LAYOUT_LOCKED))
    }

    /// Locks `layout` (the desktop's active layout), keeping the modifiers and the depressed
    /// and latched layouts. The corresponding C function is `xkb_state_update_mask`.
    public func lockLayout(_ layout: Int) {
        _ = xkb_state_update_mask(
            pointer, xkb_state_serialize_mods(pointer, XKB_STATE_MODS_DEPRESSED),
            xkb_state_serialize_mods(pointer, XKB_STATE_MODS_LATCHED), xkb_state_serialize_mods(pointer, XKB_STATE_MODS_LOCKED),
            xkb_state_serialize_layout(pointer, XKB_STATE_LAYOUT_DEPRESSED),
            xkb_state_serialize_layout(pointer, XKB_STATE_LAYOUT_LATCHED), xkb_layout_index_t(layout))
    }

    /// Sets exactly `modifiers` as held and `layout` as the locked layout, with no key down
    /// (for enumerating what each press would give). The corresponding C function is
    /// `xkb_state_update_mask`.
    public func set(modifiers: ModifierSet, layout: Int) {
        var mask: UInt32 = 0
        for (mod, bit) in keymap.masks where modifiers.contains(mod) { mask |= bit }
        _ = xkb_state_update_mask(pointer, mask, 0, 0, 0, 0, xkb_layout_index_t(layout))
    }

    /// The two chord forms of a press of `code` in the current state, as `KeyMapper` makes
    /// them: the level-one keysym (first Latin layout on a non-Latin one) with every chord
    /// modifier, and the produced keysym without the consumed modifiers (nil when the same).
    public func chordForms(code: UInt16) -> (chord: ChordKey, alternate: ChordKey?) {
        let keysym = self.keysym(code: code)
        let layout = keymap.layoutCount == 1 ? 0 : self.layout(code: code)
        var chordLayout = layout
        if layout < keymap.latinLayouts.count, !keymap.latinLayouts[layout], let latin = keymap.firstLatinLayout { chordLayout = latin }
        var levelOne = keymap.levelOneKeysym(code: code, layout: chordLayout)
        if levelOne == .noSymbol { levelOne = keysym }
        let chordMods = modifiers.intersection(.chordModifiers)
        let chord = ChordKey(modifiers: chordMods, keysym: levelOne)
        var alternateMods = chordMods
        if !chordMods.isEmpty {
            var consumed = consumedModifiers(code: code)
            if keysym.isCased { consumed.remove(.shift) }
            alternateMods.subtract(consumed)
        }
        let alternate = ChordKey(modifiers: alternateMods, keysym: keysym)
        return (chord, alternate == chord ? nil : alternate)
    }
}
