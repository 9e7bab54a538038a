import CXkb

/// Owns one `struct xkb_context`. Created without reading `XKB_DEFAULT_*` from the
/// process environment: the names to compile come from `KeymapNames`, resolved
/// by the caller, so tests are hermetic.
public final class XkbContext: @unchecked Sendable {
    // @unchecked: an xkb_context is immutable after creation apart from its
    // refcount and log settings, which we never touch after init.
    let pointer: OpaquePointer

    /// The corresponding C function is `xkb_context_new`.
    public init(includePaths: [String] = []) throws(KeymapError) {
        let flags = includePaths.isEmpty
            ? XKB_CONTEXT_NO_ENVIRONMENT_NAMES
            : xkb_context_flags(XKB_CONTEXT_NO_ENVIRONMENT_NAMES.rawValue | XKB_CONTEXT_NO_DEFAULT_INCLUDES.rawValue)
        guard let ctx = xkb_context_new(flags) else { throw KeymapError(message: "cannot create an xkb context") }
        for path in includePaths { xkb_context_include_path_append(ctx, path) }
        pointer = ctx
    }

    deinit { xkb_context_unref(pointer) }
}

/// A keymap or compose table that could not be built, with the names that were asked for.
public struct KeymapError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
