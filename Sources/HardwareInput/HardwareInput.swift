// The library product: every module of the package's library, re-exported, so that
// `import HardwareInput` keeps working for tools and tests. The modules themselves
// (see docs/architecture.md, "Module map") are what the code inside the package imports.
@_exported public import KbdJSON
@_exported public import KbdTOML
@_exported public import KbdSystem
@_exported public import KbdCore
@_exported public import KbdGeometry
@_exported public import KbdKeymap
@_exported public import KbdRecording
@_exported public import KbdEvdev
@_exported public import KbdSeats
@_exported public import KbdCommands
@_exported public import KbdPipeline
@_exported public import KbdConfig
@_exported public import KbdControl
@_exported public import KbdProcess
@_exported public import KbdDaemon
