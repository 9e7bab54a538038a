public import KbdControl

/// The bar's connection to the service: connects with the control client (which checks
/// who serves the socket before anything is sent), subscribes to presence, geometry,
/// toolbar and hud, feeds the model, draws what changed, sends `run_command` for a
/// tap, and reconnects when the service goes away (ControlConnection's lifecycle, the bar's
/// policy: 0.1 s doubling to 5 s). It has no timer
/// while connected: idle, the bar sleeps in the toolkit's main loop.
public final class BarController {
    public let socketPath: String
    public private(set) var model = BarModel()
    private let client: ControlClient
    private let toolkit: any BarToolkit
    private var connection = ControlConnection(policy: .bar)
    private var drawn = BarView()
    private let log: (String) -> Void
    /// `KBD_BAR_TRACE`: a line "hud-event MICROSECONDS" on stderr for every HUD shown (the
    /// toolkit prints "hud-frame MICROSECONDS" once its frame is painted).
    private let trace: Bool

    /// The events the bar subscribes to (`session` is for operators only: the service sends
    /// `toolbar` and `hud` to the active session's user alone).
    public static let events: Set<ControlEventKind> = [.presence, .geometry, .toolbar, .hud]

    /// `log` gets one line per thing worth saying (never a typed key: the bar gets none).
    public init(socketPath: String, toolkit: any BarToolkit, trace: Bool = false, log: @escaping (String) -> Void) {
        self.socketPath = socketPath
        self.toolkit = toolkit
        self.trace = trace
        self.log = log
        client = ControlClient(path: socketPath)
    }

    /// Connects now (or arms the timer to try again).
    public func start() {
        let width = toolkit.outputWidth()
        if width > 0 { model.resized(width) }
        connect()
    }

    /// The bar's surface is `width` pixels wide now: the buttons are laid out again.
    public func resized(_ width: Int) {
        guard width > 0, width != model.width else { return }
        model.resized(width)
        redraw()
    }

    public func timerFired() { perform(connection.timerFired()) }

    private func connect() {
        perform(connection.start())
    }

    private func disconnected(_ reason: String) {
        perform(connection.lost(reason, nowMilliseconds: toolkit.monotonicMicroseconds() / 1000))
    }

    /// Does what the connection's lifecycle says, in order.
    private func perform(_ actions: [ControlConnection.Action]) {
        for action in actions {
            switch action {
            case .connect:
                do throws(ControlClientError) {
                    try client.connect(nonBlocking: true)
                } catch {
                    perform(connection.connectFailed(error))
                    continue
                }
                if connection.standingRequests.isEmpty { _ = connection.stand("subscribe", .subscribe(Self.events)) }
                perform(connection.connected(fd: client.fd, nowMilliseconds: toolkit.monotonicMicroseconds() / 1000))
            case .watch(let fd):
                toolkit.watch(fd: fd)
            case .unwatch:
                toolkit.watch(fd: -1)
                client.disconnect()
                model.disconnected()
                redraw()
            case .send(let requests):
                for request in requests where !client.send(request) {
                    disconnected("cannot send to the service")
                    break
                }
            case .armTimer(let milliseconds):
                toolkit.arm(milliseconds: milliseconds)
            case .say(let notice):
                say(notice)
            case .giveUp:
                break  // the bar's policy never gives up
            }
        }
    }

    private func say(_ notice: ControlConnection.Notice) {
        switch notice {
        case .waiting(let message): log("waiting for the service at \(socketPath) (\(message))")
        case .untrustedServer(let message): log("\(message); waiting for the real service")
        case .refused(let advice): log(advice)
        case .connected: log("connected to \(socketPath)")
        case .lost(let reason): log("lost the service (\(reason)); reconnecting")
        }
    }

    /// The socket is readable (or hung up).
    public func readable() {
        let incoming = client.read()
        do throws(ControlClientError) {
            while let line = try client.nextLine() {
                connection.received()
                handle(line)
            }
        } catch {
            log(error.message)
            return disconnected("a bad line")
        }
        redraw()
        if case .closed(let reason) = incoming { disconnected(reason) }
    }

    private func handle(_ line: ControlLine) {
        switch line {
        case .reply(.subscribe(let s)):
            model.subscribed(s)
        case .reply(let reply):
            if !reply.ok { log("the service refused \(reply.name): \(reply.error ?? "no reason given")") }
        case .event(let event):
            if trace, case .hud(let h) = event.payload, h.show { log("hud-event \(toolkit.monotonicMicroseconds())") }
            model.apply(event)
        }
    }

    private func redraw() {
        let view = model.view(measure: toolkit.textWidth)
        if view.toolbar != drawn.toolbar {
            if trace, let bar = view.toolbar, bar.pages > 1, bar.page != drawn.toolbar?.page || drawn.toolbar?.pages != bar.pages {
                log("toolbar-page \(bar.page + 1)/\(bar.pages) (\(bar.buttons.count) buttons, \(model.width) px)")
            }
            toolkit.draw(toolbar: view.toolbar)
        }
        if view.hud != drawn.hud { toolkit.draw(hud: view.hud) }
        drawn = view
    }

    /// Toolbar button `index` was tapped: the service runs its command as if its chord had
    /// been typed (a user command through the agent that registered it). The More button
    /// (`ToolbarView.moreIndex`) shows the next page.
    public func tapped(_ index: Int) {
        guard let bar = drawn.toolbar else { return }
        if index == ToolbarView.moreIndex {
            model.nextPage(of: bar.pages)
            return redraw()
        }
        guard let button = bar.buttons.first(where: { $0.index == index }) else { return }
        let command = button.command
        if !client.send(.runCommand(id: command.id, table: command.table)) { disconnected("cannot send to the service") }
    }
}
