public import KbdCore
import KbdSystem
/// Several recordings replayed as several devices, merged in timestamp order
/// (ties go to the file given first). Each device is attached just before its
/// first event and detached just after its last; a file without events is
/// attached and detached at time zero. Streaming: one pending event per file.
public final class RecordingSource {
    // Struct of arrays, one slot per file still playing: choosing the next event reads
    // only the trivially-copyable heads (no reference counting per event).
    private var ids: [DeviceID] = []
    private var readers: [EvemuReader<FileByteSource>] = []
    private var descriptions: [DeviceDescription] = []
    private var heads: [InputEvent] = []
    private var attached: [Bool] = []
    /// Attach/detach events due before the next input.
    private var queue: [SourceEvent] = []
    private var queued = 0

    /// Opens every file and reads its header; the first bad file throws.
    public init(paths: [String]) throws(RecordingError) {
        for (i, path) in paths.enumerated() {
            let reader = try EvemuReader(path: path)
            let name = path.split(separator: "/").last.map(String.init) ?? path
            let description = reader.description ?? .genericKeyboard(name: name)
            if let head = try reader.next() {
                ids.append(DeviceID(i))
                readers.append(reader)
                descriptions.append(description)
                heads.append(head)
                attached.append(false)
            } else {
                queue.append(.attached(DeviceID(i), description, time: .zero))
                queue.append(.detached(DeviceID(i), time: .zero))
            }
        }
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
        let event = heads[best]
        let id = ids[best]
        if !attached[best] {
            attached[best] = true
            return .attached(id, descriptions[best], time: event.time)
        }
        if let following = try readers[best].next() {
            heads[best] = following
        } else {
            queue.append(.detached(id, time: event.time))
            ids.remove(at: best)
            readers.remove(at: best)
            descriptions.remove(at: best)
            heads.remove(at: best)
            attached.remove(at: best)
        }
        return .input(id, event)
    }
}
