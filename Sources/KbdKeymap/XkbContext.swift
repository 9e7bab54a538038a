import CXkb
import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// Owns one `struct xkb_context`. Created without reading `XKB_DEFAULT_*` from the
/// process environment: the names to compile come from `KeymapNames`, resolved
/// by the caller, so tests are hermetic.
public final class XkbContext: @unchecked Sendable {
    // @unchecked: an xkb_context is immutable after creation apart from its
    // refcount and log settings, which we never touch after init.
    let pointer: OpaquePointer
    /// xkbcommon's error lines since the last `takeLog()`: captured instead of printed, so a
    /// keymap that cannot be compiled is one error naming where its names came from.
    let log = XkbLog()

    /// The corresponding C function is `xkb_context_new`.
    public init(includePaths: [String] = []) throws(KeymapError) {
        let flags = includePaths.isEmpty
            ? XKB_CONTEXT_NO_ENVIRONMENT_NAMES
            : xkb_context_flags(XKB_CONTEXT_NO_ENVIRONMENT_NAMES.rawValue | XKB_CONTEXT_NO_DEFAULT_INCLUDES.rawValue)
        guard let ctx = xkb_context_new(flags) else { throw KeymapError(message: "cannot create an xkb context") }
        for path in includePaths { xkb_context_include_path_append(ctx, path) }
        pointer = ctx
        xkb_context_set_user_data(ctx, Unmanaged.passUnretained(log).toOpaque())
        xkb_context_set_log_level(ctx, XKB_LOG_LEVEL_ERROR)
        xkb_context_set_log_fn(ctx) { ctx, _, format, args in
            guard let ctx, let format, let args, let user = xkb_context_get_user_data(ctx) else { return }
            var buffer = [CChar](repeating: 0, count: 512)
            _ = vsnprintf(&buffer, buffer.count, format, args)
            let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            Unmanaged<XkbLog>.fromOpaque(user).takeUnretainedValue().append(line)
        }
    }

    /// The lines xkbcommon logged since the last call, trimmed and without repeats.
    func takeLog() -> [String] { log.take() }

    deinit { xkb_context_unref(pointer) }
}

/// Collects xkbcommon's log lines for one context (used on the thread that compiles).
final class XkbLog: @unchecked Sendable {
    private var lines: [String] = []
    private static let limit = 20

    func append(_ line: String) {
        var text = Substring(line)
        while let l = text.last, l == "\n" || l == " " { text = text.dropLast() }
        // The include-path listings (a tab-indented path per line) say nothing the error does not.
        if text.hasPrefix("\t") || text.hasPrefix(" ") || text.includes("include paths") { return }
        guard !text.isEmpty, lines.count < Self.limit, !lines.contains(String(text)) else { return }
        lines.append(String(text))
    }

    func take() -> [String] {
        defer { lines.removeAll() }
        return lines
    }
}

/// A keymap or compose table that could not be built, with the names that were asked for.
public struct KeymapError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
