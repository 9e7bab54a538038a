import ArgumentParser
import KbdService

@main
struct KbdCommandd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kbd-commandd",
        abstract: "Keyboard command service: hardware keyboards, xkb layouts, chords and commands.",
        discussion: """
            Reads keyboards through libevdev, maps keys with xkbcommon (so shortcuts follow the \
            layout printed on the keycaps: German, French, Russian…), matches chords against a \
            command table and runs commands. Everything the daemon does can be replayed from \
            evemu recordings.

            Examples:
              kbd-commandd monitor
              kbd-commandd check
              kbd-commandd reload
              kbd-commandd replay /usr/share/doc/kbd-commandd/examples/recordings/desktop-keys.evemu --config /usr/share/doc/kbd-commandd/examples/desktop.toml
              kbd-commandd replay /usr/share/doc/kbd-commandd/examples/recordings/logitech-k400-ctrl-c.evemu --print all --format json --layout de
              kbd-commandd commands --config /usr/share/doc/kbd-commandd/examples/commands.toml --scope editor

            The config is /etc/kbd-commandd/config.toml plus /etc/kbd-commandd/config.d/*.toml \
            unless --config names one file.

            Exit codes: 0 success; 1 other failure (a request the service refused, a server \
            not trusted, a failed write); 64 usage error; 65 bad recording or scenario \
            (file:line); 66 a config, recording, device or socket cannot be opened; 78 bad config \
            or keymap (file:line; check and reload print every problem).
            """,
        version: ServiceOptions.version,
        subcommands: [ReplayCommand.self, RunCommand.self, AgentCommand.self, BarCommand.self, WatchCommand.self, DevicesCommand.self, RecordCommand.self, CheckCommand.self, CommandsCommand.self, ReloadCommand.self, MonitorCommand.self, GeometryCommand.self, PortalCommand.self]
    )
}
