// The per-user session agent: `kbd-commandd agent` executes this binary, which links
// neither the argument parser nor Foundation (see BENCHMARKS.md for its memory).
import KbdAgent
#if canImport(Glibc)
import Glibc
#endif

exit(Agent.main(arguments: Array(CommandLine.arguments.dropFirst())))
