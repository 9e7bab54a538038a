import KbdCore

/// Where a keymap's keys sit on the US layout, for the key command's `localize` and
/// `mirror` (UIKeyCommand's automatic localization and mirroring): per layout and evdev
/// code, the US layout's level-one keysym at that position when the layout cannot type it
/// with no modifier or Shift alone (`bracketleft` at the key that types ü on `de`, where `[`
/// needs AltGr+8), and which layouts are written right to left. Made once per keymap, so
/// the mapper reads one array element per key event.
public struct KeyPositions: Sendable {
    /// `table[layout * 256 + code]`: the US keysym to localize to, 0 when the key needs none.
    let table: [UInt32]
    let rightToLeftLayouts: [Bool]
    /// Whether some key localizes or some layout is right to left (else the mapper reads nothing).
    public let isActive: Bool

    /// No localization and no right-to-left layout (a plain `us` keymap).
    public static let none = KeyPositions(table: [], rightToLeftLayouts: [])

    init(table: [UInt32], rightToLeftLayouts: [Bool]) {
        self.table = table
        self.rightToLeftLayouts = rightToLeftLayouts
        isActive = table.contains { $0 != 0 } || rightToLeftLayouts.contains(true)
    }

    /// The positions of `keymap` against `reference` (the US layout's first layout).
    public init(keymap: XkbKeymap, reference: XkbKeymap) {
        var table = [UInt32](repeating: 0, count: keymap.layoutCount * 256)
        // Chords on a non-Latin layout read the first Latin one's keys: only layouts chords are
        // read in get entries (us,ru has none, us being the US layout).
        for layout in 0..<keymap.layoutCount where keymap.chordLayout(active: layout) == layout {
            for code in 0..<256 {
                let us = reference.levelOneKeysym(code: UInt16(code), layout: 0)
                guard us != .noSymbol, !us.isModifier else { continue }
                let here = keymap.levelOneKeysym(code: UInt16(code), layout: layout)
                // Typeable as written (at this key or another, with Shift at most): unchanged.
                if here.lowercased == us.lowercased || keymap.typesPlainly(us, layout: layout) { continue }
                table[layout * 256 + code] = us.lowercased.rawValue
            }
        }
        self.table = table
        rightToLeftLayouts = keymap.rightToLeftLayouts
        isActive = table.contains { $0 != 0 } || rightToLeftLayouts.contains(true)
    }

    /// The positions of `keymap`: none to localize when every layout chords are read in is the
    /// US layout itself (no US keymap compiled; a right-to-left layout still mirrors), else
    /// against the US reference, compiled in the keymap's context (none if it cannot be).
    static func make(for keymap: XkbKeymap) -> KeyPositions {
        if isReference(keymap) { return KeyPositions(rightToLeftOf: keymap) }
        guard let reference = try? XkbKeymap(context: keymap.context, names: KeymapNames(layout: "us", variant: "", options: "")) else { return .none }
        return KeyPositions(keymap: keymap, reference: reference)
    }

    /// Whether every layout chords are read in is the US layout itself (`us` with no variant:
    /// `us`, `us,ru`, `us,ara`): nothing to localize, and no US keymap to compile for it.
    static func isReference(_ keymap: XkbKeymap) -> Bool {
        let layouts = (keymap.names.layout ?? "").split(separator: ",", omittingEmptySubsequences: false)
        let variants = (keymap.names.variant ?? "").split(separator: ",", omittingEmptySubsequences: false)
        guard layouts.count == keymap.layoutCount else { return false }
        return (0..<keymap.layoutCount).allSatisfy { l in
            keymap.chordLayout(active: l) != l || (layouts[l] == "us" && (l >= variants.count || variants[l].isEmpty))
        }
    }

    /// No localization; the keymap's right-to-left layouts (`us,ara`).
    init(rightToLeftOf keymap: XkbKeymap) {
        self.init(table: [], rightToLeftLayouts: keymap.rightToLeftLayouts)
    }

    /// The US keysym at `code` on `layout` when the key localizes, else `.noSymbol`.
    @inline(__always)
    public func localized(code: UInt16, layout: Int) -> Keysym {
        let i = layout &* 256 &+ Int(code)
        guard code < 256, i < table.count else { return .noSymbol }
        return Keysym(table[i])
    }

    /// Whether `layout` is written right to left.
    @inline(__always)
    public func rightToLeft(_ layout: Int) -> Bool { layout < rightToLeftLayouts.count && rightToLeftLayouts[layout] }

    /// The keys a chord's keysym localizes from on `layout`: each code where the US layout has
    /// `keysym` and the layout cannot type it plainly (empty: typeable as written).
    public func codes(localizing keysym: Keysym, layout: Int) -> [UInt16] {
        guard layout >= 0, (layout + 1) * 256 <= table.count else { return [] }
        let raw = keysym.lowercased.rawValue
        return (0..<256).compactMap { table[layout * 256 + $0] == raw ? UInt16($0) : nil }
    }
}

/// A chord that the active layout cannot type as written, and the key it fires from there
/// instead: `Ctrl+bracketleft` on `de` is `Ctrl+Ü`, the key at the US `[`.
public struct ChordLocalization: Sendable, Equatable {
    /// The chord as written (`Ctrl+bracketleft`).
    public var chord: ChordKey
    /// The chord as the user's keycaps show it (`Ctrl+Ü`).
    public var keycaps: String
    /// The evdev code of the key (`KEY_LEFTBRACE`) and the layout's keysym there (`udiaeresis`).
    public var code: UInt16
    public var keysym: Keysym
    /// The layout's name as xkbcommon gives it ("German").
    public var layoutName: String

    /// nil when `chord`'s key is typeable on `layout` with no modifier or Shift alone.
    public init?(_ chord: ChordKey, keymap: XkbKeymap, layout: Int, positions: KeyPositions) {
        let chordLayout = keymap.chordLayout(active: min(max(0, layout), max(0, keymap.layoutCount - 1)))
        guard let code = positions.codes(localizing: chord.keysym, layout: chordLayout).first else { return nil }
        let here = keymap.levelOneKeysym(code: code, layout: chordLayout)
        guard here != .noSymbol else { return nil }
        self.chord = chord
        self.code = code
        keysym = here
        keycaps = (chord.modifiers.names + [here.keycapName]).joined(separator: "+")
        layoutName = chordLayout < keymap.layoutNames.count ? keymap.layoutNames[chordLayout] : ""
    }

    /// What `check` says: `Ctrl+bracketleft is localized to Ctrl+Ü (the key at the US '[',
    /// KEY_LEFTBRACE) on German, where '[' needs AltGr or is not typeable`.
    public var explanation: String {
        let written = chord.keysym.keycapName
        return "\(chord) fires from \(keycaps) on \(layoutName): '\(written)' needs AltGr (or cannot be typed) there, so the key at the US '\(written)' (\(EventCodeNames.keyName(code))) stands in; localize = false keeps it literal"
    }
}

/// How chords show on the user's keycaps at one layout (the HUD, the bar and listings):
/// a localized chord as the key it fires from (`Ctrl+Ü` on `de`), a mirrored one as its
/// pair while the layout is right to left.
public struct ChordKeycaps: Sendable, Equatable {
    /// US keysym → the layout's level-one keysym at the same key, for keys that localize.
    let localized: [UInt32: Keysym]
    public let rightToLeft: Bool

    public static let none = ChordKeycaps(localized: [:], rightToLeft: false)

    init(localized: [UInt32: Keysym], rightToLeft: Bool) {
        self.localized = localized
        self.rightToLeft = rightToLeft
    }

    /// The keycaps of `keymap` at active `layout`, from its positions.
    public init(keymap: XkbKeymap, layout: Int, positions: KeyPositions) {
        let active = min(max(0, layout), max(0, keymap.layoutCount - 1))
        let chordLayout = keymap.chordLayout(active: active)
        var map: [UInt32: Keysym] = [:]
        for code in UInt16(0)..<256 {
            let us = positions.localized(code: code, layout: chordLayout)
            let here = keymap.levelOneKeysym(code: code, layout: chordLayout)
            if us != .noSymbol, here != .noSymbol, map[us.rawValue] == nil { map[us.rawValue] = here }
        }
        localized = map
        rightToLeft = positions.rightToLeft(active)
    }

    public var isEmpty: Bool { localized.isEmpty && !rightToLeft }

    /// The chord as the keycaps show it, or nil when it shows as written.
    public func shown(_ chord: ChordKey, localize: Bool, mirror: Bool) -> String? {
        var c = chord
        var changed = false
        if mirror, rightToLeft, let m = c.mirrored {
            c = m
            changed = true
        }
        if localize, let here = localized[c.keysym.rawValue] { return (c.modifiers.names + [here.keycapName]).joined(separator: "+") }
        return changed ? c.description : nil
    }

    /// A whole command's keys as shown (`Ctrl+X Ctrl+Ü`), or nil when shown as written.
    public func shown(_ keys: [ChordKey], localize: Bool, mirror: Bool) -> String? {
        guard !isEmpty else { return nil }
        var any = false
        let words = keys.map { k in
            if let s = shown(k, localize: localize, mirror: mirror) { any = true; return s }
            return k.description
        }
        return any ? words.joined(separator: " ") : nil
    }
}
