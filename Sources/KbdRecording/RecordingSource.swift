public import KbdCore
import KbdSystem
#if canImport(Glibc)
import Glibc
#endif

/// Several recordings replayed as several devices, merged in timestamp order
/// (ties go to the file given first). Each device is attached just before its
/// first event and detached just after its last; a file without events is
/// attached and detached at time zero. Streaming: one pending event per file.
///
/// A file is open only while it plays: `init` reads each file's header and first
/// event one file at a time and closes it; a file is opened again when its first
/// event is due and closed after its last. Any number of consecutive recordings
/// replays with a few descriptors and buffers; recordings that overlap in time are
/// open together, and more of them than the descriptor limit allows is an error that
/// says so (before issue 17 every file was opened at once: 10,000 files held 10,000
/// descriptors and 64 KiB buffers, and replay failed at 1,024).
public final class RecordingSource {
    // Struct of arrays, one slot per file playing, in the order the files were given:
    // choosing the next event reads only the trivially-copyable heads (no reference
    // counting per event), and the first of equal times is the file given first. The
    // next file to start has a slot too, not yet open, its head the first event's time:
    // the same scan finds when it is due, at no cost per event.
    private var ids: [DeviceID] = []
    private var readers: [EvemuReader<FileByteSource>?] = []
    /// The same readers, unretained, for the per-event call: `readers` owns them (and keeps
    /// them alive while their slot plays); reading a class reference out of an array costs a
    /// retain and a release per event (~40 instructions), this does not.
    private var borrowed: [Unmanaged<EvemuReader<FileByteSource>>?] = []
    private var descriptions: [DeviceDescription] = []
    private var heads: [InputEvent] = []
    private var states: [State] = []
    /// Files with events that have not started, by first event time, then by order given.
    private var pendingTimes: [EventTime] = []
    private var pendingIDs: [DeviceID] = []
    private var pendingPaths: [String] = []
    private var nextPending = 0
    /// Attach/detach events due before the next input.
    private var queue: [SourceEvent] = []
    private var queued = 0
    private let chunkSize: Int

    private enum State: UInt8 {
        /// The next file to start: not open yet.
        case waiting
        case open
        case attached
    }

    /// The most files that were open at once (for tests: consecutive files need one).
    public private(set) var mostOpenAtOnce = 0

    /// Reads every file's header and first event, one file open at a time; the first bad
    /// file throws.
    public init(paths: [String]) throws(RecordingError) {
        // One file keeps the large buffer (replay throughput, see BENCHMARKS.md); many
        // files, which may have to be open together, take 8 KiB each.
        chunkSize = paths.count > 16 ? 8 * 1024 : 64 * 1024
        var pending: [(time: EventTime, id: DeviceID, path: String)] = []
        for (i, path) in paths.enumerated() {
            let reader = try Self.open(path, chunkSize: chunkSize)
            if let head = try reader.next() {
                pending.append((head.time, DeviceID(i), path))
            } else {
                queue.append(.attached(DeviceID(i), Self.description(of: reader), time: .zero))
                queue.append(.detached(DeviceID(i), time: .zero))
            }
        }
        pending.sort { ($0.time, $0.id) < ($1.time, $1.id) }
        pendingTimes = pending.map(\.time)
        pendingIDs = pending.map(\.id)
        pendingPaths = pending.map(\.path)
        addWaiting()
    }

    private static func open(_ path: String, chunkSize: Int) throws(RecordingError) -> EvemuReader<FileByteSource> {
        let file: FileByteSource
        do { file = try FileByteSource(path: path) } catch {
            if error.errno == EMFILE || error.errno == ENFILE {
                throw RecordingError(path: path, line: 0, message: "cannot open: \(error.message): more recordings overlap in time than the limit on open files allows (ulimit -n); replay fewer at once")
            }
            throw RecordingError(path: path, line: 0, message: "cannot open: \(error.message)")
        }
        return try EvemuReader(source: file, path: path, chunkSize: chunkSize)
    }

    private static func description(of reader: EvemuReader<FileByteSource>) -> DeviceDescription {
        let name = reader.path.split(separator: "/").last.map(String.init) ?? reader.path
        return reader.description ?? .genericKeyboard(name: name)
    }

    /// The next source event, or nil when every file is done.
    public func next() throws(RecordingError) -> SourceEvent? {
        if queued < queue.count {
            defer {
                queued += 1
                if queued == queue.count {
                    queue.removeAll()
                    queued = 0
                }
            }
            return queue[queued]
        }
        guard !heads.isEmpty else { return nil }
        var best = 0
        if heads.count > 1 {
            for i in 1..<heads.count where heads[i].time < heads[best].time { best = i }
        }
        if states[best] != .attached {
            if states[best] == .waiting { best = try start(best) }
            states[best] = .attached
            return .attached(ids[best], descriptions[best], time: heads[best].time)
        }
        let event = heads[best]
        let id = ids[best]
        let read = borrowed[best].unsafelyUnwrapped._withUnsafeGuaranteedRef { reader in
            Result { () throws(RecordingError) -> InputEvent? in try reader.next() }
        }
        if let following = try read.get() {
            heads[best] = following
        } else {
            // Done: the descriptor and the buffer go now.
            queue.append(.detached(id, time: event.time))
            ids.remove(at: best)
            readers.remove(at: best)
            borrowed.remove(at: best)
            descriptions.remove(at: best)
            heads.remove(at: best)
            states.remove(at: best)
        }
        return .input(id, event)
    }

    /// Gives the next pending file its slot, in the order the files were given, not open yet.
    private func addWaiting() {
        guard nextPending < pendingTimes.count else { return }
        let id = pendingIDs[nextPending]
        let slot = ids.firstIndex { $0 > id } ?? ids.count
        ids.insert(id, at: slot)
        readers.insert(nil, at: slot)
        borrowed.insert(nil, at: slot)
        descriptions.insert(.genericKeyboard(name: ""), at: slot)
        heads.insert(InputEvent(time: pendingTimes[nextPending], type: 0, code: 0, value: 0), at: slot)
        states.insert(.waiting, at: slot)
    }

    /// Opens the waiting file in `slot` again (its first event is due), makes the next pending
    /// file wait, and returns the first one's slot.
    private func start(_ slot: Int) throws(RecordingError) -> Int {
        let path = pendingPaths[nextPending]
        let time = pendingTimes[nextPending]
        nextPending += 1
        let reader = try Self.open(path, chunkSize: chunkSize)
        guard let head = try reader.next(), head.time == time else {
            throw RecordingError(path: path, line: reader.lineNumber, message: "the first event is not the one read when replay started (at \(time)); the file changed during replay")
        }
        readers[slot] = reader
        borrowed[slot] = Unmanaged.passUnretained(reader)
        descriptions[slot] = Self.description(of: reader)
        heads[slot] = head
        states[slot] = .open
        mostOpenAtOnce = max(mostOpenAtOnce, states.count)
        let id = ids[slot]
        addWaiting()
        // The next file sorts after this one: it starts later, or at the same time but given later.
        return ids[slot] == id ? slot : slot + 1
    }
}
