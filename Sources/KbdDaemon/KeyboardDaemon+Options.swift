public import KbdCore
public import KbdKeymap
public import KbdConfig
public import KbdProcess

extension KeyboardDaemon {
    public struct Options: Sendable {
        /// Where the control socket goes; nil for none.
        public var socketPath: String?
        /// Let clients subscribe to `key` events (typed text).
        public var allowKeyEvents: Bool
        public var maxChildren: Int
        public var presenceDebounceMilliseconds: Int
        public var compose: ComposeSource
        /// "NAME=value" strings `run` programs get (`KBD_COMMAND_ID` is added per child).
        public var childEnvironment: [String]
        /// At most this many control clients at once.
        public var maxClients: Int
        /// Serve every local user's session agent (socket mode 0666): a peer that is not
        /// root, the service's user or in its group may register its own table and learn
        /// presence and geometry, nothing else. Off: such peers are refused (mode 0660).
        public var userAgents: Bool
        /// How the runner learns that a command's process exited (`.polled`: the daemon reaps
        /// after each turn of its loop; CommandRunner.ExitNotice).
        public var childExits: CommandRunner.ExitNotice

        public init(socketPath: String? = nil, allowKeyEvents: Bool = false, maxChildren: Int = 8,
                    presenceDebounceMilliseconds: Int = KeyboardPresence.defaultDebounceMilliseconds, compose: ComposeSource = .none,
                    childEnvironment: [String] = CommandRunner.defaultEnvironment, maxClients: Int = 256, userAgents: Bool = false,
                    childExits: CommandRunner.ExitNotice = .pidfd) {
            self.socketPath = socketPath
            self.allowKeyEvents = allowKeyEvents
            self.maxChildren = maxChildren
            self.presenceDebounceMilliseconds = presenceDebounceMilliseconds
            self.compose = compose
            self.childEnvironment = childEnvironment
            self.maxClients = maxClients
            self.userAgents = userAgents
            self.childExits = childExits
        }
    }

    /// A loaded configuration: the table and the keymap compiled for it.
    public struct Loaded {
        public var config: Config
        public var keymap: XkbKeymap
        public init(config: Config, keymap: XkbKeymap) {
            self.config = config
            self.keymap = keymap
        }
    }
}
