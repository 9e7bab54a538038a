#if canImport(Glibc)
import Glibc
#endif

/// Whether this process runs with ThreadSanitizer's runtime (`__tsan_init` is linked in).
/// TSan does not support fork() in a many-threaded process: a child that runs Swift code
/// (allocation, string building) can deadlock on a lock another test thread held at the
/// fork. The agent has one thread; tests of such children run in the unit and ASan runs.
public let underThreadSanitizer: Bool = dlsym(nil, "__tsan_init") != nil
