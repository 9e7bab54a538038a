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
              kbd-commandd replay examples/recordings/ctrl-shift-t.evemu --config examples/commands.toml
              kbd-commandd replay session.evemu --print all --format json --layout de
              kbd-commandd check --config /etc/kbd-commandd/config.toml
              kbd-commandd commands --config examples/commands.toml --scope editor

            Exit codes: 0 success; 1 failure (check found problems); 64 usage error; \
            65 bad recording or scenario (file:line); 66 an input file cannot be opened; \
            78 bad config or keymap (file:line).
            """,
        version: ServiceOptions.version,
        subcommands: [ReplayCommand.self, RunCommand.self, AgentCommand.self, WatchCommand.self, DevicesCommand.self, RecordCommand.self, CheckCommand.self, CommandsCommand.self, ReloadCommand.self, MonitorCommand.self, GeometryCommand.self]
    )
}
