import KbdBar
import Testing

/// Issue 28: `kbd-commandd bar [--socket PATH] [--config FILE]`, and where it will not run.
@Suite struct BarOptionsTests {
    @Test func parsesItsOptions() {
        #expect(BarOptions.parse([]) == .run(BarOptions()))
        #expect(BarOptions.parse(["--socket", "/s", "--config", "/c"]) == .run(BarOptions(socket: "/s", config: "/c")))
        #expect(BarOptions.parse(["--socket=/s", "-c", "/c"]) == .run(BarOptions(socket: "/s", config: "/c")))
        #expect(BarOptions.parse(["--help"]) == .help)
        #expect(BarOptions.parse(["--version"]) == .version)
        guard case .usage(let m) = BarOptions.parse(["--sock", "/s"]) else { Issue.record("accepted --sock"); return }
        #expect(m.contains("--sock"))
        guard case .usage(let n) = BarOptions.parse(["--socket"]) else { Issue.record("accepted --socket without a value"); return }
        #expect(n.contains("needs a value"))
    }

    @Test func gnomeHasNoLayerShellButPhoshHas() {
        #expect(BarOptions.unsupportedDesktop(["XDG_CURRENT_DESKTOP": "GNOME"]) != nil)
        #expect(BarOptions.unsupportedDesktop(["XDG_CURRENT_DESKTOP": "ubuntu:GNOME"]) != nil)
        #expect(BarOptions.unsupportedDesktop(["XDG_CURRENT_DESKTOP": "Phosh:GNOME"]) == nil)
        #expect(BarOptions.unsupportedDesktop(["XDG_CURRENT_DESKTOP": "sway"]) == nil)
        #expect(BarOptions.unsupportedDesktop(["XDG_CURRENT_DESKTOP": "KDE"]) == nil)
        #expect(BarOptions.unsupportedDesktop([:]) == nil)
    }

    @Test func waylandSocketAsLibwaylandFindsIt() {
        #expect(BarOptions.waylandSocket(["XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/wayland-0")
        #expect(BarOptions.waylandSocket(["XDG_RUNTIME_DIR": "/run/user/1000", "WAYLAND_DISPLAY": "wayland-1"]) == "/run/user/1000/wayland-1")
        #expect(BarOptions.waylandSocket(["WAYLAND_DISPLAY": "/tmp/w"]) == "/tmp/w")
        #expect(BarOptions.waylandSocket(["WAYLAND_DISPLAY": "wayland-1"]) == nil)
        #expect(BarOptions.waylandSocket([:]) == nil)
    }

    @Test func readsBarEnabledAlone() throws {
        #expect(try BarOptions.enabled(configText: "[bar]\nenabled = false\n", path: "c.toml") == false)
        #expect(try BarOptions.enabled(configText: "[osk]\nbackend = \"none\"\n[bar]\nenabled = true\n", path: "c.toml") == true)
        #expect(try BarOptions.enabled(configText: "[[command]]\nid = \"a\"\nkeys = \"Ctrl+A\"\n", path: "c.toml") == nil)
        #expect(throws: BarConfigError(message: "c.toml:2: bar.enabled: expected true or false, found a string")) {
            try BarOptions.enabled(configText: "[bar]\nenabled = \"no\"\n", path: "c.toml")
        }
        do { _ = try BarOptions.enabled(configText: "[bar\n", path: "c.toml"); Issue.record("accepted bad TOML") } catch {
            #expect(error.message.hasPrefix("c.toml:1: "), "\(error.message)")
        }
    }

    @Test func helpTeachesTheContract() {
        for needle in ["kbd-commandd bar", "[bar] enabled", "layer-shell", "GNOME", "69", "--socket", "--config"] {
            #expect(BarOptions.help.contains(needle), "--help does not mention \(needle)")
        }
    }
}
