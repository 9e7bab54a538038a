import ArgumentParser
import KbdAgent
import KbdProcess
import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// `kbd-commandd portal list|revoke APP`: the shortcuts apps got through the desktop portal
/// (the session agent's GlobalShortcuts backend) and approved for good, as kept in the user's
/// state directory.
struct PortalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "portal",
        abstract: "List or revoke the global shortcuts apps got through the desktop portal.",
        discussion: """
            Apps (OBS, Discord, Mumble, Chromium, Electron apps…) ask for global shortcuts \
            through the desktop portal's GlobalShortcuts interface; the session agent answers \
            it on desktops without a backend of their own (sway, i3, river, Wayfire, labwc, \
            niri, COSMIC…), as [portal] approve says ("ask", "always", "never"). What was \
            approved is kept per app in $XDG_STATE_HOME/kbd-commandd/portal-approvals \
            (~/.local/state/kbd-commandd/portal-approvals), so the app's next session asks \
            nothing. An app without an app id (not sandboxed) is named by its executable.

            Examples:
              kbd-commandd portal list
              kbd-commandd portal revoke com.obsproject.Studio
            """,
        subcommands: [PortalListCommand.self, PortalRevokeCommand.self]
    )
}

/// The approvals file of the user running the command, read (an absent file: none yet).
func loadPortalApprovals() throws -> (path: String, approvals: PortalApprovals) {
    guard let path = PortalApprovals.path(environment: ProcessEnvironment.current()) else {
        throw report(CLIFailure(message: "neither XDG_STATE_HOME nor HOME is set: no state directory", code: ExitStatus.usage))
    }
    let bytes: [UInt8]
    do { bytes = try readWholeFile(path: path, limit: 1 << 20) } catch {
        if access(path, F_OK) != 0 { return (path, PortalApprovals()) }
        throw report(CLIFailure(message: "\(path): \(error.message)", code: ExitStatus.noInput))
    }
    do { return (path, try PortalApprovals(decoding: String(decoding: bytes, as: UTF8.self))) } catch {
        throw report(CLIFailure(message: "\(path): \(error)", code: ExitStatus.dataError))
    }
}

struct PortalListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Print each app's approved shortcuts: app, chord, description, shortcut id.",
        discussion: "One line per shortcut, tab-separated: the app (its app id, or its executable), the chord, the app's description and the app's id for the shortcut. Prints nothing when no app has one."
    )

    func run() throws {
        let (_, approvals) = try loadPortalApprovals()
        let stdout = FileOutput.standardOutput()
        for e in approvals.entries {
            stdout.write("\(e.app)\t\(e.trigger.keys)\t\(e.description)\t\(e.shortcutID)".escapingControlCharactersButTabs + "\n")
        }
        try stdout.flush()
    }
}

struct PortalRevokeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Forget every approved shortcut of an app (it asks again at its next session).",
        discussion: "APP is the first column of 'kbd-commandd portal list'. Bindings an app holds in a running session stay until it closes that session. An app with nothing approved is said, with exit status 0."
    )

    @Argument(help: ArgumentHelp("The app, as 'portal list' names it.", valueName: "app"))
    var app: String

    func run() throws {
        let (path, loaded) = try loadPortalApprovals()
        var approvals = loaded
        let removed = approvals.revoke(app: app)
        let stdout = FileOutput.standardOutput()
        guard removed > 0 else {
            // Revoking twice is not a failure: nothing of that app is approved either way.
            stdout.write("no approved shortcut of \(app) (see 'kbd-commandd portal list')".escapingControlCharacters + "\n")
            return try stdout.flush()
        }
        if let problem = PortalApprovalsFile.write(approvals.encoded, to: path) {
            throw report(CLIFailure(message: "\(path): \(problem)", code: ExitStatus.failure))
        }
        stdout.write("revoked \(removed) shortcut\(removed == 1 ? "" : "s") of \(app)".escapingControlCharacters + "\n")
        try stdout.flush()
    }
}

extension String {
    fileprivate var escapingControlCharactersButTabs: String {
        split(separator: "\t", omittingEmptySubsequences: false).map { String($0).escapingControlCharacters }.joined(separator: "\t")
    }
}
