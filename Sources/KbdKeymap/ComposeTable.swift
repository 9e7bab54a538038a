import KbdSystem
import CXkb

/// Where the compose table comes from.
public enum ComposeSource: Sendable, Hashable {
    /// No compose processing: dead keys produce nothing further.
    case none
    /// The system table for a locale such as `en_US.UTF-8`.
    case locale(String)
    /// A Compose file in the libX11 text format, with the locale it is for.
    case file(path: String, locale: String)

    /// The locale from `LC_ALL`, `LC_CTYPE`, `LANG` (the first set), defaulting to
    /// `en_US.UTF-8`; the C and POSIX locales also use `en_US.UTF-8`, which has the
    /// dead-key sequences people expect.
    public static func fromEnvironment(_ environment: [String: String]) -> ComposeSource {
        for key in ["LC_ALL", "LC_CTYPE", "LANG"] {
            if let v = environment[key], !v.isEmpty {
                return v == "C" || v == "POSIX" || v.hasPrefix("C.") ? .locale("en_US.UTF-8") : .locale(v)
            }
        }
        return .locale("en_US.UTF-8")
    }
}

/// Owns one `struct xkb_compose_table`.
public final class ComposeTable: @unchecked Sendable {
    // @unchecked: a compiled compose table is immutable apart from its refcount.
    let pointer: OpaquePointer
    public let context: XkbContext

    /// Loads the table. The corresponding C functions are
    /// `xkb_compose_table_new_from_locale` and `xkb_compose_table_new_from_buffer`.
    public init(context: XkbContext, source: ComposeSource) throws(KeymapError) {
        let table: OpaquePointer?
        switch source {
        case .none:
            throw KeymapError(message: "no compose source")
        case .locale(let locale):
            table = xkb_compose_table_new_from_locale(context.pointer, locale, XKB_COMPOSE_COMPILE_NO_FLAGS)
            guard table != nil else { throw KeymapError(message: "no compose table for locale '\(locale)'") }
        case .file(let path, let locale):
            let bytes: [UInt8]
            do { bytes = try readWholeFile(path: path, limit: 16 << 20) } catch {
                throw KeymapError(message: "\(path): cannot read the compose file: \(error.message)")
            }
            table = bytes.withUnsafeBufferPointer { buf in
                buf.withMemoryRebound(to: CChar.self) { chars in
                    xkb_compose_table_new_from_buffer(
                        context.pointer, chars.baseAddress, chars.count, locale, XKB_COMPOSE_FORMAT_TEXT_V1,
                        XKB_COMPOSE_COMPILE_NO_FLAGS)
                }
            }
            guard table != nil else { throw KeymapError(message: "\(path): not a valid Compose file") }
        }
        self.pointer = table!
        self.context = context
    }

    deinit { xkb_compose_table_unref(pointer) }
}

/// Owns one `struct xkb_compose_state`: the sequence typed so far on one device.
public final class ComposeState {
    let pointer: OpaquePointer
    public let table: ComposeTable

    public enum Status: Sendable, Equatable {
        case nothing, composing, composed, cancelled
    }

    /// The corresponding C function is `xkb_compose_state_new`.
    public init(table: ComposeTable) throws(KeymapError) {
        guard let s = xkb_compose_state_new(table.pointer, XKB_COMPOSE_STATE_NO_FLAGS) else {
            throw KeymapError(message: "cannot create a compose state")
        }
        pointer = s
        self.table = table
    }

    deinit { xkb_compose_state_unref(pointer) }

    /// Feeds a keysym; returns the status after it and, when a sequence completed,
    /// its text. Completed and cancelled sequences reset the state.
    /// The corresponding C functions are `xkb_compose_state_feed`,
    /// `xkb_compose_state_get_status` and `xkb_compose_state_get_utf8`.
    public func feed(_ keysym: Keysym) -> (Status, String?) {
        let result = xkb_compose_state_feed(pointer, keysym.rawValue)
        guard result == XKB_COMPOSE_FEED_ACCEPTED else { return (.nothing, nil) }
        switch xkb_compose_state_get_status(pointer) {
        case XKB_COMPOSE_COMPOSING:
            return (.composing, nil)
        case XKB_COMPOSE_COMPOSED:
            let text = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buf -> String in
                let n = xkb_compose_state_get_utf8(pointer, buf.baseAddress, 64)
                return n > 0 ? String(cString: buf.baseAddress!) : ""
            }
            xkb_compose_state_reset(pointer)
            return (.composed, text)
        case XKB_COMPOSE_CANCELLED:
            xkb_compose_state_reset(pointer)
            return (.cancelled, nil)
        default:
            return (.nothing, nil)
        }
    }

    /// Forgets a sequence in progress. The corresponding C function is `xkb_compose_state_reset`.
    public func reset() { xkb_compose_state_reset(pointer) }
}
