import CBarShim
import KbdBar

/// The bar's toolkit: GTK 3 with gtk-layer-shell, through the C shim (CBarShim), which
/// owns the widgets. One per process.
final class GtkToolkit: BarToolkit {
    /// Set before the main loop runs; the shim's callbacks reach it through their context.
    var controller: BarController?

    func watch(fd: Int32) { kbdbar_watch(fd) }
    func arm(milliseconds: Int) { kbdbar_arm_timer(Int32(clamping: milliseconds)) }
    func monotonicMicroseconds() -> Int64 { kbdbar_monotonic_us() }
    func textWidth(_ text: String) -> Int { Int(kbdbar_text_width(text)) }
    func outputWidth() -> Int { Int(kbdbar_output_width()) }

    func draw(toolbar: ToolbarView?) {
        guard let toolbar else { return kbdbar_toolbar_show(0) }
        kbdbar_toolbar_begin(Int32(clamping: toolbar.height))
        for group in toolbar.groups {
            kbdbar_toolbar_group(group.title)
            for b in group.buttons { kbdbar_toolbar_button(b.label, b.detail, Int32(clamping: b.index)) }
        }
        if let more = toolbar.more {
            kbdbar_toolbar_button(more, "The next page of shortcuts (\(toolbar.page + 1) of \(toolbar.pages) shown)", Int32(ToolbarView.moreIndex))
        }
        kbdbar_toolbar_show(1)
    }

    func draw(hud: HudView?) {
        guard let hud else { return kbdbar_hud_show(0) }
        kbdbar_hud_begin(hud.heading)
        for group in hud.groups {
            kbdbar_hud_group(group.title)
            for row in group.rows { kbdbar_hud_row(row.chord, row.title, row.dimmed ? 1 : 0) }
        }
        kbdbar_hud_show(1)
    }

    /// Hands the shim the callbacks; `self` must outlive the main loop.
    func installCallbacks() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        kbdbar_set_callbacks(context, { context, index in
            Unmanaged<GtkToolkit>.fromOpaque(context!).takeUnretainedValue().controller?.tapped(Int(index))
        }, { context in
            Unmanaged<GtkToolkit>.fromOpaque(context!).takeUnretainedValue().controller?.readable()
        }, { context in
            Unmanaged<GtkToolkit>.fromOpaque(context!).takeUnretainedValue().controller?.timerFired()
        }, { context, width in
            Unmanaged<GtkToolkit>.fromOpaque(context!).takeUnretainedValue().controller?.resized(Int(width))
        })
    }
}
