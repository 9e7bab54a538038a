public import KbdCore
import KbdSystem
/// Several recordings replayed as several devices, merged in timestamp order
/// (ties go to the file given first). Each device is attached just before its
/// first event and detached just after its last; a file without events is
/// attached and detached at time zero. Streaming: one pending event per file.
public final class RecordingSource {
    private final class Track {
        let id: DeviceID
        let reader: EvemuReader<FileByteSource>
        let description: DeviceDescription
        var head: InputEvent?
        var attached = false
        init(id: DeviceID, reader: EvemuReader<FileByteSource>, description: DeviceDescription) {
            self.id = id
            self.reader = reader
            self.description = description
        }
    }

    private var tracks: [Track] = []

    /// Opens every file and reads its header; the first bad file throws.
    public init(paths: [String]) throws(RecordingError) {
        for (i, path) in paths.enumerated() {
            let reader = try EvemuReader(path: path)
            let name = path.split(separator: "/").last.map(String.init) ?? path
            let description = reader.description ?? .genericKeyboard(name: name)
            let track = Track(id: DeviceID(i), reader: reader, description: description)
            track.head = try reader.next()
            if track.head == nil {
                queue.append(.attached(track.id, description, time: .zero))
                queue.append(.detached(track.id, time: .zero))
            } else {
                tracks.append(track)
            }
        }
    }


    /// The next source event, or nil when every file is done.
    public func next() throws(RecordingError) -> SourceEvent? {
        if !queue.isEmpty { return queue.removeFirst() }
        var best: Track?
        for t in tracks where t.head != nil {
            if best == nil || t.head!.time < best!.head!.time { best = t }
        }
        guard let track = best, let event = track.head else { return nil }
        if !track.attached {
            track.attached = true
            return .attached(track.id, track.description, time: event.time)
        }
        track.head = try track.reader.next()
        if track.head == nil {
            queue.append(.detached(track.id, time: event.time))
            tracks.removeAll { $0 === track }
        }
        return .input(track.id, event)
    }

    private var queue: [SourceEvent] = []
}
