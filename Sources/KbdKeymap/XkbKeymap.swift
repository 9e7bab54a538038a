import KbdCore
import KbdSystem
import CXkb
#if canImport(Glibc)
import Glibc
#endif

/// Owns one compiled `struct xkb_keymap` plus what the pipeline precomputes
/// from it once, so no per-event lookup goes by name: the modifier masks of
/// our named modifiers, each layout's level-one keysym per key, which layouts
/// are Latin, and which keys are modifier keys.
public final class XkbKeymap: @unchecked Sendable {
    // @unchecked: a compiled xkb_keymap is immutable; the precomputed tables are `let`.
    let pointer: OpaquePointer
    public let context: XkbContext
    public let names: KeymapNames
    /// Layout names as xkbcommon reports them (e.g. "English (US)", "Russian").
    public let layoutNames: [String]
    /// For each layout, whether its letter keys produce Latin letters.
    public let latinLayouts: [Bool]
    /// The first Latin layout, used for chords on non-Latin layouts.
    public let firstLatinLayout: Int?
    /// xkb real-modifier masks for our names.
    let masks: [(ModifierSet, UInt32)]
    /// `modifiers(fromMask:)` for every mask of the eight real modifiers, when every
    /// named modifier is a real one (as in every evdev keymap): one load per lookup.
    let realModifierTable: [ModifierSet]?
    /// `levelOne[layout * 256 + evdevCode]`: keysym at level one of that layout, 0 if none.
    let levelOne: [UInt32]
    /// Evdev codes (< 256) whose level-one keysym is a modifier in any layout.
    let modifierKeys: Bitmask
    /// Options that matched no rule, which libxkbcommon ignored (it says so in its log).
    public let ignoredOptions: [String]
    /// For each layout, the keysyms a key types there with no modifier or Shift alone (a chord
    /// with such a key is typeable as written; one that needs AltGr or a level-3 shift is not).
    public let plainKeysyms: [Set<UInt32>]
    /// For each layout, whether it is written right to left (its letter keys give Arabic,
    /// Hebrew, Syriac, Thaana or N'Ko letters: ara, il, ir, pk, af, iq, sy, mv and variants).
    public let rightToLeftLayouts: [Bool]
    /// The key positions `localize` and `mirror` read (KeyPositions), made on first need and
    /// kept with the keymap, so every mapper of this keymap shares them: a keymap other than a
    /// plain `us` compiles the US reference once, not once per mapper.
    public var keyPositions: KeyPositions { positionsOnce.value { KeyPositions.make(for: self) } }
    private let positionsOnce = Once<KeyPositions>()

    /// Compiles a keymap. The corresponding C function is `xkb_keymap_new_from_names`.
    public init(context: XkbContext, names: KeymapNames) throws(KeymapError) {
        let resolved = names.overlaying(.builtIn)
        _ = context.takeLog()
        let keymap: OpaquePointer? = withRuleNames(resolved) { rmlvo in
            xkb_keymap_new_from_names(context.pointer, rmlvo, XKB_KEYMAP_COMPILE_NO_FLAGS)
        }
        let log = context.takeLog()
        guard let keymap else {
            // xkbcommon's own lines, folded into this one error (they are not printed).
            let said = log.isEmpty ? "" : " (xkbcommon: \(log.joined(separator: "; ")))"
            throw KeymapError(message: "cannot compile a keymap for \(resolved)\(said); check the layout, variant and option names (see /usr/share/X11/xkb/rules/evdev.lst)")
        }
        self.pointer = keymap
        self.context = context
        self.names = resolved
        ignoredOptions = Self.ignoredOptions(log)

        let layoutCount = Int(xkb_keymap_num_layouts(keymap))
        layoutNames = (0..<layoutCount).map { i in
            xkb_keymap_layout_get_name(keymap, xkb_layout_index_t(i)).map { String(cString: $0) } ?? ""
        }
        var table = [UInt32](repeating: 0, count: layoutCount * 256)
        var modifierKeys = Bitmask()
        for layout in 0..<layoutCount {
            for code in 0..<256 {
                var syms: UnsafePointer<xkb_keysym_t>?
                let n = xkb_keymap_key_get_syms_by_level(keymap, xkb_keycode_t(code + 8), xkb_layout_index_t(layout), 0, &syms)
                if n > 0, let syms {
                    table[layout * 256 + code] = syms[0]
                    if Keysym(syms[0]).isModifier { modifierKeys.insert(code) }
                }
            }
        }
        levelOne = table
        self.modifierKeys = modifierKeys
        // A layout is Latin when most of the alphabetic block (KEY_Q … KEY_M) gives Latin letters.
        let letterCodes = Array(16...25) + Array(30...38) + Array(44...50)
        latinLayouts = (0..<layoutCount).map { layout in
            let latin = letterCodes.filter { Keysym(table[layout * 256 + $0]).isLatinLetter }.count
            return latin * 2 > letterCodes.count
        }
        firstLatinLayout = latinLayouts.firstIndex(of: true)
        rightToLeftLayouts = (0..<layoutCount).map { layout in
            let rtl = letterCodes.filter { Keysym(table[layout * 256 + $0]).isRightToLeftLetter }.count
            return rtl * 2 > letterCodes.count
        }
        plainKeysyms = Self.plainKeysyms(keymap, layouts: layoutCount)

        let realNames: [(ModifierSet, String)] = [
            (.ctrl, XKB_MOD_NAME_CTRL), (.alt, XKB_MOD_NAME_ALT), (.shift, XKB_MOD_NAME_SHIFT),
            (.super, XKB_MOD_NAME_LOGO), (.altGr, "Mod5"), (.capsLock, XKB_MOD_NAME_CAPS), (.numLock, XKB_MOD_NAME_NUM),
        ]
        let masks: [(ModifierSet, UInt32)] = realNames.compactMap { mod, name in
            let index = xkb_keymap_mod_get_index(keymap, name)
            return index == XKB_MOD_INVALID ? nil : (mod, UInt32(1) << index)
        }
        self.masks = masks
        if masks.allSatisfy({ $0.1 < 0x100 }) {
            realModifierTable = (0..<256).map { mask in
                var set = ModifierSet()
                for (mod, bit) in masks where UInt32(mask) & bit != 0 { set.insert(mod) }
                return set
            }
        } else {
            realModifierTable = nil
        }
    }

    deinit { xkb_keymap_unref(pointer) }

    /// The keysyms of each layout at the levels reached with no modifier or Shift alone.
    /// The corresponding C functions are `xkb_keymap_num_levels_for_key`,
    /// `xkb_keymap_key_get_mods_for_level` and `xkb_keymap_key_get_syms_by_level`.
    private static func plainKeysyms(_ keymap: OpaquePointer, layouts: Int) -> [Set<UInt32>] {
        let shiftIndex = xkb_keymap_mod_get_index(keymap, XKB_MOD_NAME_SHIFT)
        let shift: xkb_mod_mask_t = shiftIndex == XKB_MOD_INVALID ? 0 : 1 << shiftIndex
        var masks = [xkb_mod_mask_t](repeating: 0, count: 16)
        return (0..<layouts).map { layout in
            var plain = Set<UInt32>()
            for code in 0..<256 {
                let keycode = xkb_keycode_t(code + 8), l = xkb_layout_index_t(layout)
                let levels = xkb_keymap_num_levels_for_key(keymap, keycode, l)
                for level in 0..<levels {
                    let n = masks.withUnsafeMutableBufferPointer {
                        xkb_keymap_key_get_mods_for_level(keymap, keycode, l, level, $0.baseAddress, $0.count)
                    }
                    // Level one is reached with no modifier even when no mask is listed.
                    guard level == 0 || masks.prefix(n).contains(where: { $0 & ~shift == 0 }) else { continue }
                    var syms: UnsafePointer<xkb_keysym_t>?
                    let count = xkb_keymap_key_get_syms_by_level(keymap, keycode, l, level, &syms)
                    if count > 0, let syms { for i in 0..<Int(count) { plain.insert(Keysym(syms[i]).lowercased.rawValue) } }
                }
            }
            return plain
        }
    }

    /// Whether `keysym` (letters in either case) is typed on `layout` with no modifier or Shift alone.
    public func typesPlainly(_ keysym: Keysym, layout: Int) -> Bool {
        layout < plainKeysyms.count && plainKeysyms[layout].contains(keysym.lowercased.rawValue)
    }

    /// The layout chords are read in while `layout` is active: itself, or the first Latin
    /// layout when it is not Latin (Ctrl+C on Russian).
    public func chordLayout(active layout: Int) -> Int {
        if layout < latinLayouts.count, !latinLayouts[layout], let latin = firstLatinLayout { return latin }
        return layout
    }

    /// The options of libxkbcommon's `Unrecognized RMLVO option "NAME" was ignored` lines.
    static func ignoredOptions(_ log: [String]) -> [String] {
        let marker = "Unrecognized RMLVO option \""
        return log.compactMap { line in
            guard let rest = line.text(after: marker), let end = rest.firstIndex(of: "\"") else { return nil }
            return String(rest[..<end])
        }
    }

    public var layoutCount: Int { layoutNames.count }

    /// Our modifier set for an xkb modifier mask.
    @inline(__always)
    func modifiers(fromMask mask: UInt32) -> ModifierSet {
        if let table = realModifierTable { return table[Int(mask & 0xFF)] }
        var set = ModifierSet()
        for (mod, bit) in masks where mask & bit != 0 { set.insert(mod) }
        return set
    }

    /// The keysym at level one of `layout` for evdev `code`; 0 when none.
    @inline(__always)
    public func levelOneKeysym(code: UInt16, layout: Int) -> Keysym {
        guard code < 256, layout < layoutCount else { return .noSymbol }
        return Keysym(levelOne[layout * 256 + Int(code)])
    }

    /// Whether the key's level-one keysym is a modifier (Shift, Control, ISO_Level3_Shift…) in some layout.
    public func isModifierKey(code: UInt16) -> Bool { modifierKeys.contains(Int(code)) }

    /// Whether the key repeats. The corresponding C function is `xkb_keymap_key_repeats`.
    public func keyRepeats(code: UInt16) -> Bool {
        xkb_keymap_key_repeats(pointer, xkb_keycode_t(code) + 8) != 0
    }

    /// All evdev codes below 256 whose level-one keysym in `layout` is `keysym`.
    public func codes(forLevelOne keysym: Keysym, layout: Int) -> [UInt16] {
        (0..<256).compactMap { levelOne[layout * 256 + $0] == keysym.rawValue ? UInt16($0) : nil }
    }
}

private func withRuleNames<R>(_ names: KeymapNames, _ body: (UnsafePointer<xkb_rule_names>) -> R) -> R {
    (names.rules ?? "").withCString { r in
        (names.model ?? "").withCString { m in
            (names.layout ?? "").withCString { l in
                (names.variant ?? "").withCString { v in
                    (names.options ?? "").withCString { o in
                        var rmlvo = xkb_rule_names(rules: r, model: m, layout: l, variant: v, options: o)
                        return withUnsafePointer(to: &rmlvo) { body($0) }
                    }
                }
            }
        }
    }
}

/// A value made once, on first need, by whichever thread asks first (a keymap is shared by
/// the service's threads and by tests running in parallel).
final class Once<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `made` is read and written only with `lock` held.
    private var lock = pthread_mutex_t()
    private var made: Value?

    init() { pthread_mutex_init(&lock, nil) }
    deinit { pthread_mutex_destroy(&lock) }

    func value(_ make: () -> Value) -> Value {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        if let made { return made }
        let value = make()
        made = value
        return value
    }
}
