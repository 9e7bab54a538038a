import KbdTOML
import KbdSystem
import KbdCore
import KbdGeometry
import KbdKeymap
import KbdCommands
import KbdConfig
import KbdControl
import KbdProcess
@testable import KbdAgent
import Logging
import KbdTestSupport
import Testing
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// A keyboard switch that records what the agent did to it.
private final class RecordingSwitch: KeyboardSwitch {
    let name = "test keyboard"
    var on: Bool
    var failReads = false
    var log: [String] = []
    struct Unreachable: Error {}
    init(on: Bool) { self.on = on }
    func switchOff() throws -> Bool {
        log.append("off?")
        if failReads { throw Unreachable() }
        guard on else { return false }
        on = false
        return true
    }
    func switchOn() throws {
        log.append("on")
        on = true
    }
}

private final class FakeDesktop: OnScreenKeyboardDesktop {
    var runningBackend: OnScreenKeyboardSettings.Backend = .none
    var switches: [OnScreenKeyboardSettings.Backend: RecordingSwitch] = [:]
    var asked: [OnScreenKeyboardSettings.Backend] = []
    func running() -> OnScreenKeyboardSettings.Backend { runningBackend }
    func keyboard(_ backend: OnScreenKeyboardSettings.Backend) -> (any KeyboardSwitch)? {
        asked.append(backend)
        return switches[backend]
    }
}

private let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

/// The agent's on-screen keyboard state: off while a hardware keyboard is present, what
/// was there before back when it leaves, a keyboard the user had off left off.
@Suite struct OnScreenKeyboardStateTests {
    private func make(_ backend: OnScreenKeyboardSettings.Backend, on: Bool, desktop: FakeDesktop = FakeDesktop(),
                      onPresent: [String] = [], onAbsent: [String] = [], clock: Clock = Clock()) -> (OnScreenKeyboard, RecordingSwitch, FakeDesktop, Box) {
        let keyboard = RecordingSwitch(on: on)
        desktop.switches[backend == .auto ? desktop.runningBackend : backend] = keyboard
        let ran = Box()
        let osk = OnScreenKeyboard(settings: OnScreenKeyboardSettings(backend: backend, onPresent: onPresent, onAbsent: onAbsent),
                                   desktop: desktop, logger: quiet, debounceMilliseconds: 500, clock: { clock.now }) { argv, label in
            ran.items.append("\(label): \(argv.joined(separator: " "))")
        }
        return (osk, keyboard, desktop, ran)
    }

    final class Box { var items: [String] = [] }
    final class Clock {
        var now = EventTime(microseconds: 10_000_000)
        func advance(ms: Int) { now = now.adding(milliseconds: ms) }
    }

    /// Issue 25 item 7: presence toggling faster than the service's debounce (or coming back
    /// the same after a reconnect) does not run on_present / on_absent again; the state it
    /// settles in gets its hook once the debounce time has passed.
    @Test func presenceTogglesFasterThanTheDebounceDoNotRerunTheHooks() {
        let clock = Clock()
        let (osk, _, _, ran) = make(.none, on: true, onPresent: ["in"], onAbsent: ["out"], clock: clock)
        osk.hardwareKeyboard(present: true)
        for _ in 0..<3 {
            clock.advance(ms: 50)
            osk.hardwareKeyboard(present: false)
            clock.advance(ms: 50)
            osk.hardwareKeyboard(present: true)
            osk.settleHooks()
        }
        // The service went away and came back with the same presence: nothing again.
        osk.forgetPresence()
        osk.hardwareKeyboard(present: true)
        #expect(ran.items == ["osk.on_present: in"])
        clock.advance(ms: 50)
        osk.hardwareKeyboard(present: false)
        osk.settleHooks()
        #expect(ran.items == ["osk.on_present: in"])
        #expect(osk.hookDue != nil)
        clock.advance(ms: 500)
        osk.settleHooks()
        #expect(ran.items == ["osk.on_present: in", "osk.on_absent: out"])
        #expect(osk.hookDue == nil)
    }

    @Test("a keyboard that was on goes off at attach and on again at detach",
          arguments: [OnScreenKeyboardSettings.Backend.squeekboard, .kwin, .gnome, .wvkbd])
    func onOffOn(backend: OnScreenKeyboardSettings.Backend) {
        let (osk, keyboard, _, _) = make(backend, on: true)
        osk.hardwareKeyboard(present: true)
        #expect(keyboard.on == false)
        osk.hardwareKeyboard(present: false)
        #expect(keyboard.on == true)
        #expect(keyboard.log == ["off?", "on"])
    }

    @Test("a keyboard the user had off stays off", arguments: [OnScreenKeyboardSettings.Backend.squeekboard, .kwin, .gnome])
    func offStaysOff(backend: OnScreenKeyboardSettings.Backend) {
        let (osk, keyboard, _, _) = make(backend, on: false)
        osk.hardwareKeyboard(present: true)
        osk.hardwareKeyboard(present: false)
        #expect(keyboard.on == false)
        #expect(keyboard.log == ["off?"])
    }

    @Test func repeatsOfThePresenceDoNothing() {
        let (osk, keyboard, _, _) = make(.gnome, on: true)
        osk.hardwareKeyboard(present: true)
        osk.hardwareKeyboard(present: true)
        osk.hardwareKeyboard(present: false)
        osk.hardwareKeyboard(present: false)
        #expect(keyboard.log == ["off?", "on"])
    }

    @Test("the service gone: the keyboard comes back, and the next presence hides it again")
    func serviceGone() {
        let (osk, keyboard, _, _) = make(.gnome, on: true)
        osk.hardwareKeyboard(present: true)
        osk.forgetPresence()
        #expect(keyboard.on == true)
        osk.hardwareKeyboard(present: true)
        #expect(keyboard.on == false)
        osk.restore()
        osk.restore()
        #expect(keyboard.log == ["off?", "on", "off?", "on"])
    }

    @Test("a keyboard that cannot be read is left alone")
    func unreadable() {
        let (osk, keyboard, _, _) = make(.kwin, on: true)
        keyboard.failReads = true
        osk.hardwareKeyboard(present: true)
        osk.hardwareKeyboard(present: false)
        #expect(keyboard.on == true)
        #expect(keyboard.log == ["off?"])
    }

    @Test("auto asks what runs at each attach", arguments: [OnScreenKeyboardSettings.Backend.squeekboard, .kwin, .gnome, .wvkbd])
    func autoUsesWhatRuns(running: OnScreenKeyboardSettings.Backend) {
        let desktop = FakeDesktop()
        desktop.runningBackend = running
        let (osk, keyboard, _, _) = make(.auto, on: true, desktop: desktop)
        osk.hardwareKeyboard(present: true)
        #expect(desktop.asked == [running])
        #expect(keyboard.on == false)
        osk.hardwareKeyboard(present: false)
        #expect(keyboard.on == true)
    }

    @Test func noneOnlyRunsThePrograms() {
        let clock = Clock()
        let (osk, keyboard, desktop, ran) = make(.none, on: true, onPresent: ["notify-send", "in"], onAbsent: ["notify-send", "out"], clock: clock)
        desktop.switches = [:]
        osk.hardwareKeyboard(present: true)
        clock.advance(ms: 600)
        osk.hardwareKeyboard(present: false)
        #expect(keyboard.log.isEmpty)
        #expect(ran.items == ["osk.on_present: notify-send in", "osk.on_absent: notify-send out"])
    }

    @Test("auto's choice", arguments: [
        ([String](), nil as String?, false, OnScreenKeyboardSettings.Backend.none),
        ([], nil, true, .wvkbd),
        (["sm.puri.OSK0"], "Phosh:GNOME", true, .phosh),
        (["sm.puri.OSK0"], "GNOME", false, .gnome),  // squeekboard on GNOME follows GNOME's setting
        (["org.kde.KWin"], "KDE", false, .kwin),
        (["org.gnome.Shell"], nil, true, .wvkbd),
        ([], "GNOME", false, .gnome),
        ([], "ubuntu:GNOME", true, .gnome),
        ([], "gnome-flashback:gnome", false, .gnome),
        ([], "GNOME-Classic:sway", false, .none),
        ([], "sway", true, .wvkbd),
        // Issue 25: a bus name any session client may own chooses nothing.
        (["org.gnome.Shell", "org.kde.KWin"], "GNOME", false, .gnome),
        (["org.kde.KWin"], "sway", false, .none),
        (["sm.puri.OSK0"], "sway", true, .wvkbd),
        ([], "KDE", false, .kwin),
    ])
    func pick(owners: [String], currentDesktop: String?, wvkbd: Bool, expected: OnScreenKeyboardSettings.Backend) {
        _ = owners  // the names that once chose; they no longer do
        #expect(OnScreenKeyboard.pick(currentDesktop: currentDesktop, wvkbdRunning: wvkbd) == expected)
    }
}

/// The GNOME backend through the real GIO and the real schema
/// (gsettings-desktop-schemas), on GIO's memory backend so nothing reaches the host's
/// dconf. The desktop suite (tests-desktop/agent-e2e.sh) drives it through dconf.
@Suite struct GnomeScreenKeyboardTests {
    private final class Desktop: OnScreenKeyboardDesktop {
        let settings: GSettings
        init(settings: GSettings) { self.settings = settings }
        func running() -> OnScreenKeyboardSettings.Backend { .gnome }
        func keyboard(_ backend: OnScreenKeyboardSettings.Backend) -> (any KeyboardSwitch)? {
            backend == .gnome ? GnomeScreenKeyboard(settings: settings) : nil
        }
    }

    @Test("screen-keyboard-enabled follows the hardware keyboard; false before stays false", arguments: [true, false])
    func followsPresence(before: Bool) throws {
        let settings = try GSettings(environment: [:], store: .memory)
        let (schema, key) = (GnomeScreenKeyboard.schema, GnomeScreenKeyboard.key)
        // The schema's default is false.
        #expect(try settings.bool(schema: schema, key: key) == false)
        try settings.set(schema: schema, key: key, before)
        let osk = OnScreenKeyboard(settings: OnScreenKeyboardSettings(backend: .gnome), desktop: Desktop(settings: settings), logger: quiet) { _, _ in }
        osk.hardwareKeyboard(present: true)
        #expect(try settings.bool(schema: schema, key: key) == false)
        osk.hardwareKeyboard(present: false)
        #expect(try settings.bool(schema: schema, key: key) == before)
    }

    @Test("a missing schema or key is named")
    func missing() throws {
        let settings = try GSettings(environment: [:], store: .memory)
        #expect(throws: GSettings.Failure(message: "the GSettings schema org.kbd-commandd.missing is not installed (it comes with gsettings-desktop-schemas)")) {
            try settings.bool(schema: "org.kbd-commandd.missing", key: "screen-keyboard-enabled")
        }
        #expect(throws: GSettings.Failure(message: "the GSettings schema org.gnome.desktop.a11y.applications has no key no-such-key (gsettings-desktop-schemas is too old)")) {
            try settings.set(schema: GnomeScreenKeyboard.schema, key: "no-such-key", true)
        }
    }
}

/// The child process the agent makes its bus and GSettings calls in. Not under
/// ThreadSanitizer: it does not support fork() in a many-threaded process (the test
/// process; the agent has one thread), and the forked children hung there 1 time in 3.
@Suite(.enabled(if: !underThreadSanitizer, "ThreadSanitizer does not support fork() in a many-threaded process"))
struct DesktopProcessTests {
    @Test func answersComeBack() throws {
        #expect(try DesktopProcess.call { "kwin" } == "kwin")
        #expect(try DesktopProcess.bool { true } == true)
        #expect(try DesktopProcess.bool { false } == false)
        // The child's pid is not the agent's: the work really ran elsewhere. String(Int) of a
        // pid is a small string, made without the heap: string interpolation's buffer in the
        // child could block on a malloc lock another test thread held at the fork (it hung 1
        // in 6 under ThreadSanitizer).
        let parent = String(getpid())
        #expect(try DesktopProcess.call { String(getpid()) } != parent)
    }

    struct Refused: Error, CustomStringConvertible { var description: String { "org.kde.kwin.VirtualKeyboard.enabled: Access denied" } }

    @Test func errorsComeBackAsText() {
        #expect(throws: DesktopProcess.Failure(message: "org.kde.kwin.VirtualKeyboard.enabled: Access denied")) {
            try DesktopProcess.call { throw Refused() }
        }
    }

    @Test func aChildThatDiesOrHangsIsAFailure() {
        #expect(throws: DesktopProcess.Failure(message: "the helper process died of signal 9")) {
            try DesktopProcess.call { kill(getpid(), SIGKILL); return "never" }
        }
        #expect(throws: DesktopProcess.Failure(message: "no answer within 200 ms")) {
            try DesktopProcess.call(timeoutMilliseconds: 200) { sleep(30); return "late" }
        }
    }

    /// Issue 24: the child kept every descriptor of the agent, its connection to the service
    /// included. Now only the pipe to the agent stays open.
    @Test func theChildKeepsNoneOfTheAgentsDescriptors() throws {
        // No O_CLOEXEC: a fork would keep it. Above 3 whatever else the test process has open
        // (open() returned 3 when parallel tests had just closed theirs, and the child's
        // answer pipe is moved to 3).
        let opened = open("/dev/null", O_RDONLY)
        let inherited = fcntl(opened, F_DUPFD, 64)
        close(opened)
        defer { close(inherited) }
        #expect(inherited > 3)
        // The child asks the kernel directly (kbd_fd_is_open: no libc wrapper, which a sanitizer
        // intercepts with locks another thread may have held at the fork).
        #expect(try DesktopProcess.call { kbd_fd_is_open(inherited) == 0 ? "closed" : "open" } == "closed")
        // 0, 1, 2 and the answer's pipe (moved to 3): nothing above it.
        #expect(try DesktopProcess.call {
            var above = false
            for fd in Int32(4)..<1024 where kbd_fd_is_open(fd) != 0 { above = true }
            return above ? "more" : "none"
        } == "none")
    }

    @Test func longAnswersAreCut() throws {
        // Made before the fork: the test process has many threads (the agent has one), and a
        // child that builds a 10,000-character string can block on a lock another thread held
        // at the fork (it hung once under ThreadSanitizer).
        let long = String(repeating: "x", count: 10_000)
        #expect(try DesktopProcess.call { long }.count == DesktopProcess.maxAnswerBytes - 1)
    }
}

/// An agent killed while a hardware keyboard was present (KWin and GNOME keep the setting
/// across logins) leaves a note; the next agent puts the keyboard back (or keeps it off
/// while a keyboard is still present, and puts it back when it leaves).
@Suite struct OnScreenKeyboardCrashTests {
    static func markerPath() -> String {
        var template = Array("/tmp/kbd-osk-marker-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        return dir + "/state/kbd-commandd/osk-switched-off"
    }

    @Test("the next agent finds the note", arguments: [false, true])
    func aKilledAgentsKeyboardComesBack(presentAtRestart: Bool) throws {
        let marker = Self.markerPath()
        let desktop = FakeDesktop()
        let keyboard = RecordingSwitch(on: true)
        desktop.switches[.kwin] = keyboard
        var first: OnScreenKeyboard? = OnScreenKeyboard(settings: OnScreenKeyboardSettings(backend: .kwin), desktop: desktop, logger: quiet,
                                                        marker: marker) { _, _ in }
        first!.hardwareKeyboard(present: true)
        #expect(!keyboard.on)
        #expect(access(marker, F_OK) == 0)
        first = nil  // killed: no restore
        #expect(!keyboard.on)
        let second = OnScreenKeyboard(settings: OnScreenKeyboardSettings(backend: .kwin), desktop: desktop, logger: quiet, marker: marker) { _, _ in }
        second.hardwareKeyboard(present: presentAtRestart)
        if presentAtRestart {
            #expect(!keyboard.on)
            #expect(access(marker, F_OK) == 0)
            second.hardwareKeyboard(present: false)
        }
        #expect(keyboard.on)
        #expect(access(marker, F_OK) != 0)
        #expect(keyboard.log == ["off?", "on"])
    }

    @Test func aCleanStopLeavesNoNote() {
        let marker = Self.markerPath()
        let desktop = FakeDesktop()
        desktop.switches[.gnome] = RecordingSwitch(on: true)
        let osk = OnScreenKeyboard(settings: OnScreenKeyboardSettings(backend: .gnome), desktop: desktop, logger: quiet, marker: marker) { _, _ in }
        osk.hardwareKeyboard(present: true)
        osk.restore()
        #expect(access(marker, F_OK) != 0)
        #expect(OnScreenKeyboard.markerPath(environment: ["HOME": "/home/u"]) == "/home/u/.local/state/kbd-commandd/osk-switched-off")
        #expect(OnScreenKeyboard.markerPath(environment: ["HOME": "/home/u", "XDG_STATE_HOME": "/s"]) == "/s/kbd-commandd/osk-switched-off")
    }
}
