import KbdProcess

/// Desktop calls (sd-bus, GSettings) made in a short-lived child of the agent: KbdProcess's
/// ForkedCall, so the agent never maps those libraries (see there).
typealias DesktopProcess = ForkedCall
