// kbd-commandd-daemon: the service alone (what `kbd-commandd run` executes).
// It links HardwareInput and swift-log only, and the Swift standard library
// statically in release builds, so the resident service stays small.
import KbdService
#if canImport(Glibc)
import Glibc
#endif

exit(Service.main(arguments: Array(CommandLine.arguments.dropFirst())))
