/// A map from `DeviceID` to a value for the handful of devices a machine has:
/// a linear scan with the last hit cached beats hashing at these sizes, and the
/// hot path (the same device, event after event) is one comparison.
@usableFromInline
package struct DeviceMap<Value> {
    // Inlinable so the per-event lookups are specialised in the modules that use them.
    @usableFromInline var ids: [DeviceID] = []
    @usableFromInline var values: [Value] = []
    @usableFromInline var last = 0

    @inlinable package init() {}

    @inlinable package subscript(id: DeviceID) -> Value? {
        mutating get {
            guard let i = index(of: id) else { return nil }
            return values[i]
        }
        set {
            if let i = index(of: id) {
                if let newValue { values[i] = newValue } else {
                    ids.remove(at: i)
                    values.remove(at: i)
                    last = 0
                }
            } else if let newValue {
                ids.append(id)
                values.append(newValue)
            }
        }
    }

    @inlinable @inline(__always)
    mutating func index(of id: DeviceID) -> Int? {
        if last < ids.count, ids[last] == id { return last }
        guard let i = ids.firstIndex(of: id) else { return nil }
        last = i
        return i
    }

    @inlinable package var entries: [(DeviceID, Value)] { Array(zip(ids, values)) }
    @inlinable package var keys: [DeviceID] { ids }
    @inlinable package var isEmpty: Bool { ids.isEmpty }
}
