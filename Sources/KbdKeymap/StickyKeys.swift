/// Sticky keys, as X11's AccessX and the desktops that copy it (mutter, KWin) do them, on xkb
/// modifier masks: a modifier key pressed and released with no other key in between latches
/// its modifiers for the next key; tapped again while latched it locks them until it is
/// tapped once more. A latch clears after the next key that is not a modifier (that key
/// still sees it); a lock stays. A modifier held while another key is pressed works as
/// usual and latches nothing. Pure: `KeyMapper` applies `latched` and `locked` to the
/// device's xkb state.
public struct StickyKeys: Sendable, Equatable {
    /// xkb modifier masks latched and locked by taps.
    public private(set) var latched: UInt32 = 0
    public private(set) var locked: UInt32 = 0
    /// Modifier keys down: the modifiers each one set, and whether another key went down meanwhile.
    private var held: [(code: UInt16, mask: UInt32, used: Bool)] = []

    public init() {}

    public static func == (a: StickyKeys, b: StickyKeys) -> Bool {
        a.latched == b.latched && a.locked == b.locked && a.held.elementsEqual(b.held) { $0 == $1 }
    }

    /// A modifier key went down, setting the modifiers `mask` (those it added to the
    /// depressed ones; 0 for a lock key such as Caps Lock, which sticky keys leave alone).
    public mutating func modifierPressed(code: UInt16, mask: UInt32) {
        for i in held.indices { held[i].used = true }
        held.append((code, mask, false))
    }

    /// A modifier key went up: a tap (nothing else pressed while it was down) latches its
    /// modifiers, locks them when latched, unlocks them when locked. Returns whether
    /// `latched` or `locked` changed.
    @discardableResult
    public mutating func modifierReleased(code: UInt16) -> Bool {
        guard let i = held.firstIndex(where: { $0.code == code }) else { return false }
        let key = held.remove(at: i)
        guard !key.used, key.mask != 0 else { return false }
        if locked & key.mask != 0 {
            locked &= ~key.mask
        } else if latched & key.mask != 0 {
            latched &= ~key.mask
            locked |= key.mask
        } else {
            latched |= key.mask
        }
        return true
    }

    /// A key that is not a modifier went down: held modifiers are being used as a chord.
    public mutating func otherKeyPressed() {
        for i in held.indices { held[i].used = true }
    }

    /// After that key's event: the latch is spent. Returns whether `latched` changed.
    @discardableResult
    public mutating func clearLatch() -> Bool {
        guard latched != 0 else { return false }
        latched = 0
        return true
    }

    /// A key released without being typed (a synthetic release after a resync or a detach):
    /// no tap.
    public mutating func forget(code: UInt16) {
        held.removeAll { $0.code == code }
    }
}
