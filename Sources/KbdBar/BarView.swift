public import KbdControl

/// What the bar shows, decided by `BarModel` (pure) and drawn by a `BarToolkit`: equal
/// views draw the same, so the controller redraws only when a view changed.
public struct ToolbarView: Sendable, Equatable {
    /// The bar's height in pixels, also its exclusive zone (the compositor moves windows
    /// out of its way by that much).
    public var height: Int
    /// The current page's groups (all of them when they fit the bar's width).
    public var groups: [Group]
    /// The current page (0-based) and how many there are: more than one, and the bar shows
    /// a More button (`more`, its label) that shows the next.
    public var page = 0
    public var pages = 1
    public var more: String? { pages > 1 ? ToolbarPaging.moreLabel(page: page, pages: pages) : nil }

    /// What a tap on the More button reports instead of a button's index.
    public static let moreIndex = -1

    public struct Group: Sendable, Equatable {
        public var title: String
        public var buttons: [Button]
    }

    /// One tappable command: `index` is its place among every page's buttons (what a tap
    /// reports).
    public struct Button: Sendable, Equatable {
        public var index: Int
        public var label: String
        /// The discoverability title and the chord, for a tooltip.
        public var detail: String
        public var command: CommandRef
    }

    /// The current page's buttons in order.
    public var buttons: [Button] { groups.flatMap(\.buttons) }
}

/// A command the bar can ask the service to run (`run_command`).
public struct CommandRef: Sendable, Equatable {
    public var id: String
    public var table: CommandTableKind
}

/// The discoverability HUD's content.
public struct HudView: Sendable, Equatable {
    public var heading: String
    public var groups: [Group]

    public struct Group: Sendable, Equatable {
        public var title: String
        public var rows: [Row]
    }

    public struct Row: Sendable, Equatable {
        public var chord: String
        public var title: String
        /// Shadowed by a more specific scope, or filtered while text input is on: it would
        /// not fire now.
        public var dimmed: Bool
    }
}

/// The two surfaces; nil hides one.
public struct BarView: Sendable, Equatable {
    public var toolbar: ToolbarView?
    public var hud: HudView?
    public init(toolbar: ToolbarView? = nil, hud: HudView? = nil) {
        self.toolbar = toolbar
        self.hud = hud
    }
}
