import CGio
#if canImport(Glibc)
import Glibc
#endif

/// GSettings through GIO (libgio-2.0, loaded when the first instance is made): booleans
/// read and written through the default backend, which on a GNOME desktop is dconf
/// (writes go to dconf-service on the session bus, and `sync` waits until they are
/// done). Each call makes a GSettings object for that call only.
final class GSettings {
    enum Store {
        /// GIO's default backend: dconf on a desktop (GSETTINGS_BACKEND may choose another).
        case desktop
        /// A store of this instance alone (GIO's memory backend): for tests.
        case memory
    }

    private var gio = kbd_gio()
    /// The memory backend of `.memory` (one reference, released on deinit); nil: the default.
    private var backend: OpaquePointer?
    /// GSETTINGS_BACKEND of the agent's environment: "memory" there is a choice, not a
    /// missing dconf module.
    private let requestedBackend: String?

    struct Failure: Error, Equatable, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    init(environment: [String: String], store: Store = .desktop) throws(Failure) {
        let loaded = kbd_gio_load(&gio)
        guard loaded == 0 else {
            throw Failure(message: loaded == -ENOENT
                ? "cannot load libgio-2.0.so.0 (install libglib2.0-0)"
                : "libgio-2.0.so.0 lacks the GSettings calls (GLib 2.32 or later is needed)")
        }
        requestedBackend = environment["GSETTINGS_BACKEND"]
        if store == .memory { backend = gio.memory_backend_new() }
    }

    deinit { if let backend { gio.object_unref(UnsafeMutableRawPointer(backend)) } }

    func bool(schema: String, key: String) throws(Failure) -> Bool {
        var value: Int32 = 0
        try check(kbd_gsettings_bool(&gio, backend, schema, key, 0, &value), schema: schema, key: key)
        return value != 0
    }

    func set(schema: String, key: String, _ newValue: Bool) throws(Failure) {
        try checkBackend()
        var value: Int32 = newValue ? 1 : 0
        try check(kbd_gsettings_bool(&gio, backend, schema, key, 1, &value), schema: schema, key: key)
    }

    /// The memory backend keeps a write inside this process: GNOME would never see it.
    /// GIO falls back to it when no dconf module is installed.
    private func checkBackend() throws(Failure) {
        guard backend == nil else { return }
        var name = [CChar](repeating: 0, count: 64)
        kbd_gsettings_backend_name(&gio, &name, name.count)
        let backend = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if backend == "GMemorySettingsBackend" && requestedBackend != "memory" {
            throw Failure(message: "GSettings has no backend but memory, so GNOME would not see the change (install dconf-gsettings-backend)")
        }
    }

    private func check(_ result: Int32, schema: String, key: String) throws(Failure) {
        switch Int(result) {
        case Int(KBD_GSETTINGS_OK):
            return
        case Int(KBD_GSETTINGS_NO_SCHEMAS):
            throw Failure(message: "no GSettings schemas are installed (no gschemas.compiled under XDG_DATA_DIRS); \(schema) comes with gsettings-desktop-schemas")
        case Int(KBD_GSETTINGS_NO_SCHEMA):
            throw Failure(message: "the GSettings schema \(schema) is not installed (it comes with gsettings-desktop-schemas)")
        case Int(KBD_GSETTINGS_NO_KEY):
            throw Failure(message: "the GSettings schema \(schema) has no key \(key) (gsettings-desktop-schemas is too old)")
        case Int(KBD_GSETTINGS_NOT_WRITABLE):
            throw Failure(message: "\(schema) \(key) is locked (not writable: a dconf lockdown)")
        default:
            throw Failure(message: "\(schema) \(key): error \(result)")
        }
    }
}
