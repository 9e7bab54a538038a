/// How wide the bar's parts are drawn, in pixels, beside their text (the shim's style: a
/// button's padding and margins, a group title's margins), and how long a title may be.
/// Text widths come from the toolkit (its font); everything here is pure.
public struct BarMetrics: Sendable, Equatable {
    /// Around a button's label: 10 + 10 padding, 2 + 2 margin, and slack for the theme.
    public var buttonExtra: Int
    /// Around a group's title: 14 + 4 margin, and slack.
    public var groupExtra: Int
    /// Kept free at the bar's two ends together.
    public var edges: Int
    /// A button's title is cut to this many characters (grapheme clusters), "…" included.
    public var maxTitleCharacters: Int
    /// A HUD row's title and chord are cut to this many characters.
    public var maxHudCharacters: Int
    /// The HUD: rows per column (the shim starts a column at a group after this many) and
    /// how wide a column may be, for how many columns fit.
    public var hudRowsPerColumn: Int
    public var hudColumnWidth: Int

    public init(buttonExtra: Int = 28, groupExtra: Int = 22, edges: Int = 16, maxTitleCharacters: Int = 24,
                maxHudCharacters: Int = 40, hudRowsPerColumn: Int = 14, hudColumnWidth: Int = 420) {
        self.buttonExtra = buttonExtra
        self.groupExtra = groupExtra
        self.edges = edges
        self.maxTitleCharacters = maxTitleCharacters
        self.maxHudCharacters = maxHudCharacters
        self.hudRowsPerColumn = hudRowsPerColumn
        self.hudColumnWidth = hudColumnWidth
    }

    public static let standard = BarMetrics()

    /// A text width without the toolkit (before it answers, and in tests that want no font):
    /// 9 pixels a character, more than the bar's 11-point sans needs for most text.
    public static func estimate(_ text: String) -> Int { 9 * text.count }

    /// `text` cut to `limit` characters, the last of them "…" when it was longer.
    public static func bounded(_ text: String, _ limit: Int) -> String {
        guard limit > 0, text.count > limit else { return text }
        return String(text.prefix(limit - 1)) + "…"
    }
}

/// The toolbar's pages: what fits in the bar's width is shown, the rest goes on further
/// pages behind a "More" button (a tap shows the next page, the last leads back to the
/// first). A surface wider than the output is never asked for: 300 buttons asked GTK for a
/// 38,000-pixel surface, which cairo cannot make (32,767 at most), and the bar died
/// (SIGSEGV in libgdk).
public enum ToolbarPaging {
    /// The More button's label on page `page` (0-based) of `pages`.
    public static func moreLabel(page: Int, pages: Int) -> String { "More (\(page + 1)/\(pages))" }

    /// `groups` on pages for a bar `width` pixels wide, texts measured by `measure`. One
    /// page when everything fits; else each page holds what fits beside the More button
    /// (at least one button, however narrow the bar), a group's title repeated on each page
    /// its buttons continue on. Buttons keep their order and their indices.
    public static func pages(_ groups: [ToolbarView.Group], width: Int, metrics: BarMetrics,
                             measure: (String) -> Int) -> [[ToolbarView.Group]] {
        let available = width - metrics.edges
        func buttonWidth(_ b: ToolbarView.Button) -> Int { measure(b.label) + metrics.buttonExtra }
        func titleWidth(_ g: ToolbarView.Group) -> Int { measure(g.title) + metrics.groupExtra }
        let all = groups.reduce(0) { total, g in total + titleWidth(g) + g.buttons.reduce(0) { $0 + buttonWidth($1) } }
        if all <= available || groups.isEmpty { return [groups] }
        // The widest More label a page can have ("More (10/10)" is wider than "More (1/10)").
        let more = measure(moreLabel(page: 99, pages: 99)) + metrics.buttonExtra
        let room = available - more
        var pages: [[ToolbarView.Group]] = []
        var page: [ToolbarView.Group] = []
        var used = 0
        for group in groups {
            for button in group.buttons {
                var cost = buttonWidth(button) + (page.last?.title == group.title ? 0 : titleWidth(group))
                if used + cost > room && !page.isEmpty {
                    pages.append(page)
                    page = []
                    used = 0
                    cost = buttonWidth(button) + titleWidth(group)
                }
                if page.last?.title == group.title {
                    page[page.count - 1].buttons.append(button)
                } else {
                    page.append(ToolbarView.Group(title: group.title, buttons: [button]))
                }
                used += cost
            }
        }
        if !page.isEmpty { pages.append(page) }
        return pages
    }
}
