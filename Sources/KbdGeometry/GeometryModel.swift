/// The pure geometry model: a ``GeometryState`` in, a ``GeometryReport`` out.
///
/// Per window, the keyboard's (or toolbar's) frame is converted from screen
/// to window coordinates and clipped to the window:
///
/// | shown                 | guide (window coordinates)            | near                        |
/// |-----------------------|---------------------------------------|-----------------------------|
/// | hidden / not over it  | bottom strip (dismissed)              | none                        |
/// | docked                | the keyboard's part over the window   | bottom                      |
/// | undocked, split       | follows: its part over the window     | top when near it, else none |
/// |                       | doesn't follow: bottom strip          | none                        |
/// | floating              | follows: its part over the window     | any edge by distance        |
/// |                       | doesn't follow: bottom strip          | none                        |
/// | mini toolbar          | follows: the bar's part over the window; else the window's full width at the bar's height | bottom, plus the side it is collapsed to |
///
/// - The bottom strip is full window width at the window's bottom, as tall
///   as the bottom safe-area inset (0 when `usesBottomSafeArea` is false).
/// - Near: an edge is near when the gap between it and the same edge of
///   the guide is at most `nearThreshold` (gap ≤ threshold, inclusive); only
///   floating keyboards are measured on all four edges, undocked and split
///   ones on the top edge only.
/// - Narrow windows (``GeometryState/isNarrow(_:)``) are never near leading
///   or trailing.
/// - A keyboard is over a window when their frames share area; for a
///   toolbar that the window doesn't follow, the bar counts as spanning the
///   screen's width.
/// - `dismissRegion` is `dismissPadding` points directly above the guide
///   (clipped to the window's top), only while the guide tracks a keyboard
///   or toolbar.
public enum GeometryModel {
    /// The report for `state`. Rules are activated and deactivated relative
    /// to `previous` (matched by window id); with no previous report every
    /// active rule counts as activated.
    public static func report(for state: GeometryState, previous: GeometryReport? = nil) -> GeometryReport {
        let layout = state.layout
        let frame = state.keyboardFrame
        let windows = state.windows.map { window in
            windowReport(
                for: window, in: state, layout: layout, keyboardFrame: frame,
                previouslyActive: previous.map { $0.window(window.id)?.activeRules ?? [] }
            )
        }
        return GeometryReport(layout: layout, keyboardFrame: frame, windows: windows)
    }

    /// How the guide relates to what is shown, before rules.
    private struct Placement {
        var guide: Rect
        /// Near edges in physical terms: top, bottom, left, right.
        var top = false
        var bottom = false
        var left = false
        var right = false
        /// Whether the guide tracks a keyboard or toolbar (else it rests in
        /// the bottom strip).
        var tracking: Bool
        var dismissed: Bool
    }

    private static func windowReport(
        for window: AppWindow, in state: GeometryState, layout: GeometryLayout,
        keyboardFrame: Rect?, previouslyActive: [String]?
    ) -> WindowReport {
        let frame = window.frame
        let width = frame.width
        let height = frame.height
        let threshold = state.nearThreshold
        let stripHeight = window.usesBottomSafeArea ? min(max(window.safeArea.bottom, 0), height) : 0
        let strip = Rect(x: 0, y: height - stripHeight, width: width, height: stripHeight)
        func local(_ rect: Rect) -> Rect { rect.offsetBy(dx: -frame.x, dy: -frame.y) }

        var placement = Placement(guide: strip, tracking: false, dismissed: true)
        if var shown = keyboardFrame {
            if layout == .miniToolbar, !window.followsUndockedKeyboard {
                shown = Rect(x: 0, y: shown.y, width: state.screen.width, height: shown.height)
            }
            if let part = shown.intersection(frame) {
                var guide = local(part)
                switch layout {
                case .hidden:
                    break
                case .docked:
                    placement = Placement(guide: guide, bottom: true, tracking: true, dismissed: false)
                case .undocked, .split:
                    if window.followsUndockedKeyboard {
                        placement = Placement(guide: guide, top: guide.minY <= threshold, tracking: true, dismissed: false)
                    } else {
                        placement.dismissed = false
                    }
                case .floating:
                    if window.followsUndockedKeyboard {
                        placement = Placement(
                            guide: guide,
                            top: guide.minY <= threshold,
                            bottom: height - guide.maxY <= threshold,
                            left: guide.minX <= threshold,
                            right: width - guide.maxX <= threshold,
                            tracking: true, dismissed: false
                        )
                    } else {
                        placement.dismissed = false
                    }
                case .miniToolbar:
                    if !window.followsUndockedKeyboard {
                        guide = Rect(x: 0, y: guide.y, width: width, height: guide.height)
                    }
                    placement = Placement(
                        guide: guide, bottom: true,
                        left: state.toolbar.collapsed == .leading,
                        right: state.toolbar.collapsed == .trailing,
                        tracking: true, dismissed: false
                    )
                }
            }
        }

        var near: EdgeSet = []
        if placement.top { near.insert(.top) }
        if placement.bottom { near.insert(.bottom) }
        if placement.left { near.insert(EdgeSet(window.direction.leftEdge)) }
        if placement.right { near.insert(EdgeSet(window.direction.rightEdge)) }
        if state.isNarrow(window) { near.subtract(.horizontal) }

        let guide = placement.guide
        var dismissRegion: Rect?
        if placement.tracking, window.dismissPadding > 0 {
            let top = max(0, guide.minY - window.dismissPadding)
            if guide.minY > top {
                dismissRegion = Rect(x: guide.x, y: top, width: guide.width, height: guide.minY - top)
            }
        }

        let active = window.rules.filter { $0.isActive(near: near) }.map(\.name)
        let before = previouslyActive ?? []
        return WindowReport(
            id: window.id,
            guide: guide,
            bottomOffset: height - guide.minY,
            near: near,
            dismissed: placement.dismissed,
            dismissRegion: dismissRegion,
            activeRules: active,
            activated: active.filter { !before.contains($0) },
            deactivated: before.filter { !active.contains($0) }
        )
    }
}
